/**
 * A public record's JSON text exactly as the service that owns the record built it (from the one
 * definition of its shape in `@svc/contracts/public`): the gateway answers it as it is, without
 * parsing it or mapping it again.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** One record. */
export const jsonText = (text: string) => new JsonText(text);

/** A page of records, in the list envelope every list answers (`{ data, page, limit, total }`). */
export function pagedJsonText(items: string[], page: number, limit: number, total: number): JsonText {
  return new JsonText(`{"data":[${items.join(',')}],"page":${page},"limit":${limit},"total":${total}}`);
}
