import type { RequestLogEntry } from '@svc/contracts';
import type { Logger } from '@svc/logging';
import type { IdentityClient } from '../clients.ts';

type Entry = Omit<RequestLogEntry, '$typeName' | '$unknown'>;

/**
 * Request logs (key id, route, status, duration; never bodies or tokens) are buffered and sent
 * to identity in batches, so no request waits for a database write.
 */
export class RequestLogBuffer {
  private entries: Entry[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly identity: IdentityClient,
    private readonly logger: Logger,
    private readonly flushMs = 1_000,
    private readonly maxBatch = 1_000,
  ) {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  add(entry: Entry): void {
    this.entries.push(entry);
    if (this.entries.length >= this.maxBatch) void this.flush();
  }

  async flush(): Promise<void> {
    if (this.entries.length === 0) return;
    const batch = this.entries;
    this.entries = [];
    try {
      await this.identity.recordRequests({ entries: batch });
    } catch (error) {
      this.logger.warn({ err: error, dropped: batch.length }, 'could not store request logs');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
