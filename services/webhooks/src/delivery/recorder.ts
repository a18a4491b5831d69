import type pg from 'pg';
import { type AttemptRecord, recordAttempts } from './queue.ts';

/** The most attempt outcomes written in one statement. */
const MAX_BATCH = 200;

interface Waiting {
  record: AttemptRecord;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Writes attempt outcomes by group commit: while one statement is being written, the outcomes that
 * finish meanwhile gather and go in the next. At a low rate each outcome is written alone at once;
 * under load one commit records many, which is what lets a replica keep up with thousands of
 * attempts a second. Each caller still waits for its own outcome to be committed.
 */
export class AttemptRecorder {
  private waiting: Waiting[] = [];
  private writing: Promise<void> | undefined;

  constructor(private readonly pool: pg.Pool) {}

  record(record: AttemptRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ record, resolve, reject });
      this.writeWaiting();
    });
  }

  private writeWaiting(): void {
    this.writing ??= (async () => {
      await Promise.resolve(); // always after the assignment above, so the reset below sticks
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        try {
          await recordAttempts(
            this.pool,
            batch.map((w) => w.record),
          );
          for (const w of batch) w.resolve();
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
      this.writing = undefined;
    })();
  }
}
