import { GroupCommit } from '@svc/db';
import type pg from 'pg';
import { type AttemptRecord, recordAttempts } from './queue.ts';

/** The most attempt outcomes written in one statement. */
const MAX_BATCH = 200;

/**
 * Writes attempt outcomes by group commit: while one statement is being written, the outcomes that
 * finish meanwhile gather and go in the next. At a low rate each outcome is written alone at once;
 * under load one commit records many, which is what lets a replica keep up with thousands of
 * attempts a second. Each caller still waits for its own outcome to be committed.
 */
export class AttemptRecorder {
  private readonly commit: GroupCommit<AttemptRecord>;

  constructor(pool: pg.Pool) {
    this.commit = new GroupCommit((records) => recordAttempts(pool, records), { maxBatch: MAX_BATCH });
  }

  record(record: AttemptRecord): Promise<void> {
    return this.commit.add(record);
  }
}
