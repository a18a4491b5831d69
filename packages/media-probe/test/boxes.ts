/** Builders of small ISO-BMFF byte strings for tests (ISO/IEC 14496-12 section 4.2). */
export function box(type: string, ...payload: Uint8Array[]): Uint8Array {
  const size = 8 + payload.reduce((sum, part) => sum + part.length, 0);
  const bytes = new Uint8Array(size);
  new DataView(bytes.buffer).setUint32(0, size);
  bytes.set(ascii(type), 4);
  let at = 8;
  for (const part of payload) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

/** A header declaring a 64-bit size, with no payload behind it. */
export function largeHeader(type: string, sizeBytes: bigint): Uint8Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 1);
  bytes.set(ascii(type), 4);
  view.setBigUint64(8, sizeBytes);
  return bytes;
}

export function ftyp(major: string, ...compatible: string[]): Uint8Array {
  return box('ftyp', ascii(major), new Uint8Array(4), ...compatible.map(ascii));
}

export function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => Array.from(part)));
}

/** A copy with the 32-bit value at `offsetFromType` bytes after the first `type` replaced. */
export function patched(bytes: Uint8Array, type: string, offsetFromType: number, value: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  const at = Buffer.from(copy).indexOf(type);
  if (at < 0) throw new Error(`no '${type}' box to patch`);
  new DataView(copy.buffer).setUint32(at + offsetFromType, value);
  return copy;
}

/** Where the first box of this type starts (its size field), found by its type. */
export function boxStart(bytes: Uint8Array, type: string): number {
  const at = Buffer.from(bytes).indexOf(type);
  if (at < 4) throw new Error(`no '${type}' box`);
  return at - 4;
}
