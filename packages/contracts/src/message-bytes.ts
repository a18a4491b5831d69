import {
  create,
  type DescField,
  type DescMessage,
  type MessageInitShape,
  ScalarType,
  toBinary,
} from '@bufbuild/protobuf';

/**
 * A `bytes` field at least this long is written by hand, after the rest of the message: see
 * `encodeMessage`.
 */
const BULK_BYTES = 4096;

/** The top-level `bytes` fields of each message type (oneof members included), found once. */
const bytesFieldsOf = new WeakMap<DescMessage, DescField[]>();

/**
 * A message as protobuf binary, in one buffer allocated at its final size.
 *
 * The encoder of @bufbuild/protobuf writes into a buffer that starts at 128 bytes and doubles (a
 * fresh, zeroed array each time) until the message fits, then copies the result out: a 64 KiB
 * file chunk cost ten allocations and 320 KiB of memory outside V8's heap, and memory allocated
 * there is what makes V8 collect its whole heap, so serving a 1 MB photo cost publishing about
 * 14 ms of CPU, most of it collecting. The large `bytes` fields (file chunks, upload parts, an
 * uploaded file) are therefore left out of that encoder and appended after the rest, each as its
 * tag, length and bytes: the protobuf wire format allows fields in any order, and a reader takes
 * the last value of a singular field or oneof, so the message read is the same.
 */
export function encodeMessage(schema: DescMessage, value: unknown): Uint8Array {
  const message = create(schema, value as MessageInitShape<DescMessage>);
  const bulk = bulkFields(schema, message as unknown as Record<string, unknown>);
  if (bulk.length === 0) return toBinary(schema, message);
  const rest = { ...(message as unknown as Record<string, unknown>) };
  for (const { field } of bulk) {
    if (field.oneof) rest[field.oneof.localName] = { case: undefined };
    else rest[field.localName] = new Uint8Array(0);
  }
  const head = toBinary(schema, rest as typeof message);
  const framed = bulk.map(({ field, bytes }) => ({
    bytes,
    prefix: lengthPrefix(field.number, bytes.byteLength),
  }));
  const size = framed.reduce((sum, f) => sum + f.prefix.length + f.bytes.byteLength, head.byteLength);
  // Not zeroed first: every byte of it is written below.
  const out = Buffer.allocUnsafe(size);
  out.set(head, 0);
  let at = head.byteLength;
  for (const { prefix, bytes } of framed) {
    out.set(prefix, at);
    at += prefix.length;
    out.set(bytes, at);
    at += bytes.byteLength;
  }
  return out;
}

/** The message's large `bytes` values, with their fields. */
function bulkFields(schema: DescMessage, message: Record<string, unknown>) {
  const found: { field: DescField; bytes: Uint8Array }[] = [];
  for (const field of bytesFields(schema)) {
    const bytes = field.oneof
      ? oneofValue(message[field.oneof.localName], field.localName)
      : message[field.localName];
    if (bytes instanceof Uint8Array && bytes.byteLength >= BULK_BYTES) found.push({ field, bytes });
  }
  return found;
}

function oneofValue(oneof: unknown, name: string): unknown {
  const { case: chosen, value } = (oneof ?? {}) as { case?: string; value?: unknown };
  return chosen === name ? value : undefined;
}

function bytesFields(schema: DescMessage): DescField[] {
  let fields = bytesFieldsOf.get(schema);
  if (!fields) {
    fields = schema.fields.filter((f) => f.fieldKind === 'scalar' && f.scalar === ScalarType.BYTES);
    bytesFieldsOf.set(schema, fields);
  }
  return fields;
}

/** A length-delimited field's key (field number, wire type 2) and length, as varints. */
function lengthPrefix(fieldNumber: number, length: number): Uint8Array {
  const out: number[] = [];
  for (const value of [fieldNumber * 8 + 2, length]) {
    let v = value;
    while (v > 0x7f) {
      out.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    out.push(v);
  }
  return Uint8Array.from(out);
}
