/** The bytes as a stream of chunks of `size` bytes (an upload arriving in pieces). */
export async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** Yields `first`, then never another chunk: a stalled upload. */
export async function* stalled(first: Uint8Array): AsyncGenerator<Uint8Array> {
  yield first;
  await new Promise(() => {});
}

/** Yields zero-filled chunks forever, as fast as they are pulled. */
export async function* endless(first: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  yield first;
  for (;;) yield new Uint8Array(size);
}
