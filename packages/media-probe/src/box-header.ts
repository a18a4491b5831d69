/**
 * A box header as ISO/IEC 14496-12 section 4.2 lays it out: a 32-bit size and a four-character
 * type; size 1 means a 64-bit size follows, size 0 that the box runs to the end of the file.
 */
export type BoxHeader = {
  type: string;
  /** 8, or 16 with a 64-bit size. */
  headerBytes: number;
  /** The whole box, header included; null when it runs to the end of the file. */
  sizeBytes: number | null;
};

/** 'short': fewer bytes than the header needs; 'invalid': these bytes cannot be a box header. */
export type HeaderRead = BoxHeader | 'short' | 'invalid';

export const SHORT_HEADER_BYTES = 8;
export const LONG_HEADER_BYTES = 16;

export function readBoxHeader(bytes: Uint8Array, offset: number): HeaderRead {
  if (bytes.length - offset < SHORT_HEADER_BYTES) return 'short';
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset);
  const size32 = view.getUint32(0);
  const type = fourCc(bytes, offset + 4);
  if (type === null) return 'invalid';
  if (size32 === 0) return { type, headerBytes: SHORT_HEADER_BYTES, sizeBytes: null };
  if (size32 !== 1) {
    return size32 < SHORT_HEADER_BYTES
      ? 'invalid'
      : { type, headerBytes: SHORT_HEADER_BYTES, sizeBytes: size32 };
  }
  if (bytes.length - offset < LONG_HEADER_BYTES) return 'short';
  const size64 = view.getBigUint64(8);
  // Beyond 2^53 a size cannot be a real file's, and a number would round it.
  if (size64 < BigInt(LONG_HEADER_BYTES) || size64 > BigInt(Number.MAX_SAFE_INTEGER)) return 'invalid';
  return { type, headerBytes: LONG_HEADER_BYTES, sizeBytes: Number(size64) };
}

/** The four printable ASCII characters at `offset`, or null (box types are always printable). */
export function fourCc(bytes: Uint8Array, offset: number): string | null {
  let text = '';
  for (let i = offset; i < offset + 4; i++) {
    const code = bytes[i];
    if (code === undefined || code < 0x20 || code > 0x7e) return null;
    text += String.fromCharCode(code);
  }
  return text;
}
