/** The record a service built, as the object a tool answers (the REST answer, parsed). */
export const json = (text: string): unknown => JSON.parse(text);

/** A page of records in the list envelope every REST list answers (`{ data, page, limit, total }`). */
export function page(items: string[], query: { page: number; limit: number }, total: number) {
  return { data: items.map(json), page: query.page, limit: query.limit, total };
}
