/**
 * Media files read recently, kept in memory within a byte budget: the networks fetch each file
 * once per target, so a post to several accounts has its files read several times within seconds,
 * and each read from the volume was five file-system calls. A file's bytes under a storage key
 * never change; a deleted media's keys are dropped by this process (see removeFiles), and another
 * replica may serve them until they age out, only to holders of an unexpired signed URL. The
 * oldest entries go first when the budget is full; a file larger than an eighth of it is not kept.
 */
export class KeptFiles {
  private readonly files = new Map<string, { data: Buffer; at: number }>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): Buffer | undefined {
    const kept = this.files.get(key);
    if (!kept) return undefined;
    if (this.now() - kept.at < this.maxAgeMs) return kept.data;
    this.delete(key);
    return undefined;
  }

  set(key: string, data: Buffer): void {
    this.delete(key);
    if (data.length > this.maxBytes / 8) return;
    for (const [oldest] of this.files) {
      if (this.bytes + data.length <= this.maxBytes) break;
      this.delete(oldest);
    }
    this.files.set(key, { data, at: this.now() });
    this.bytes += data.length;
  }

  delete(key: string): void {
    const kept = this.files.get(key);
    if (!kept) return;
    this.files.delete(key);
    this.bytes -= kept.data.length;
  }

  /** Bytes kept now. */
  get size(): number {
    return this.bytes;
  }
}
