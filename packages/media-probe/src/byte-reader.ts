import { VideoProbeError } from './probe-error.ts';

/**
 * Reads a file from its chunks, front to back, holding only the chunk at hand and the bytes
 * asked for: a box's payload is skipped without being kept. It refuses to receive more than
 * `maxBytes` or to wait past `deadlineAt` (a stalled upload must not hold the probe forever).
 */
export class ByteReader {
  private chunk: Uint8Array = new Uint8Array(0);
  private chunkOffset = 0;
  private receivedBytes = 0;
  private ended = false;
  /** Bytes consumed so far: the file offset of the next byte. */
  position = 0;

  constructor(
    private readonly chunks: AsyncIterator<Uint8Array>,
    private readonly bounds: { maxBytes: number; deadlineAt: number; now: () => number },
  ) {}

  /** The next `count` bytes, or fewer when the file ends first. */
  async take(count: number): Promise<Uint8Array> {
    if (await this.fill()) {
      const available = this.chunk.length - this.chunkOffset;
      if (available >= count) return this.consume(count);
    }
    const taken = new Uint8Array(count);
    let filled = 0;
    while (filled < count && (await this.fill())) {
      const part = this.consume(Math.min(count - filled, this.chunk.length - this.chunkOffset));
      taken.set(part, filled);
      filled += part.length;
    }
    return filled === count ? taken : taken.subarray(0, filled);
  }

  /** Skips up to `count` bytes (Infinity: to the end); how many were skipped. */
  async skip(count: number): Promise<number> {
    let skipped = 0;
    while (skipped < count && (await this.fill())) {
      skipped += this.consume(Math.min(count - skipped, this.chunk.length - this.chunkOffset)).length;
    }
    return skipped;
  }

  /** Lets go of the source (a Node stream is destroyed), without waiting on it. */
  release(): void {
    if (this.ended) return;
    this.ended = true;
    this.chunks.return?.().catch(() => {});
  }

  private consume(count: number): Uint8Array {
    const part = this.chunk.subarray(this.chunkOffset, this.chunkOffset + count);
    this.chunkOffset += count;
    this.position += count;
    return part;
  }

  /** Whether a byte is at hand, pulling chunks (skipping empty ones) until one is or the file ends. */
  private async fill(): Promise<boolean> {
    while (this.chunkOffset >= this.chunk.length) {
      if (this.ended) return false;
      const next = await this.nextChunk();
      if (next.done) {
        this.ended = true;
        return false;
      }
      if (!(next.value instanceof Uint8Array)) throw new TypeError('a video source yields Uint8Array chunks');
      this.receivedBytes += next.value.length;
      if (this.receivedBytes > this.bounds.maxBytes) {
        throw new VideoProbeError('too_large', `the file is larger than ${this.bounds.maxBytes} bytes`);
      }
      this.chunk = next.value;
      this.chunkOffset = 0;
    }
    return true;
  }

  private async nextChunk(): Promise<IteratorResult<Uint8Array>> {
    const waitMs = this.bounds.deadlineAt - this.bounds.now();
    if (waitMs <= 0) throw tooSlow();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(tooSlow()), waitMs);
    });
    const next = this.chunks.next().catch((cause: unknown) => {
      throw new VideoProbeError('truncated', 'the source failed before the file ended', { cause });
    });
    try {
      return await Promise.race([next, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export function tooSlow(): VideoProbeError {
  return new VideoProbeError('too_slow', 'the file did not arrive and parse within the time bound');
}
