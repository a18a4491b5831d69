import { GroupCommit } from '@svc/db';
import type pg from 'pg';
import {
  type ClaimedRow,
  type ClaimedTarget,
  claimedTarget,
  type TargetOutcome,
  type TargetRef,
} from './post-rows.ts';
import * as sql from './post-statements.ts';

interface Job {
  post_id: string;
  account_id: string;
  attempt: number;
}
interface Claim {
  job: Job;
  windowStart: Date;
  now: Date;
  claimed?: ClaimedRow;
}
interface Outcome {
  target: TargetRef;
  outcome: TargetOutcome;
  left?: number;
}

const keyOf = (postId: string, accountId: string) => `${postId} ${accountId}`;

/**
 * Under load, how long a step waits for the same step of other jobs before it is written (see
 * GroupCommit): a few milliseconds per step buy several targets per statement.
 */
const STEP_GATHER = { busyGatherMs: 8 };

/**
 * What a publish job writes of its target as it goes (the claim, the container, the moment the
 * final call is sent, the outcome), group committed: the same step of every job in flight at that
 * moment goes in one statement (`unnest` of their values), so the commits per target fall as the
 * load rises, where they used to be one per step. Each job still waits for its own step to be
 * committed before its next network call, so what a crash leaves behind is what it was.
 */
export class TargetSteps {
  private readonly claims = new GroupCommit<Claim>((batch) => this.claimBatch(batch), STEP_GATHER);
  private readonly containers = new GroupCommit<{ target: TargetRef; containerId: string }>(
    (batch) =>
      this.write(sql.RECORD_CONTAINERS, [
        batch.map((c) => c.target.postId),
        batch.map((c) => c.target.accountId),
        batch.map((c) => c.containerId),
      ]),
    STEP_GATHER,
  );
  private readonly sends = new GroupCommit<{ target: TargetRef; sentAt: Date }>(
    (batch) =>
      this.write(sql.RECORD_PUBLISH_SENT, [
        batch.map((s) => s.target.postId),
        batch.map((s) => s.target.accountId),
        batch.map((s) => s.sentAt),
      ]),
    STEP_GATHER,
  );
  private readonly outcomes = new GroupCommit<Outcome>((batch) => this.outcomeBatch(batch), STEP_GATHER);

  constructor(private readonly pool: pg.Pool) {}

  /** Claims a target for its job's attempt; null when settled already, superseded or deferred to later. */
  async claim(job: Job, windowStart: Date, now: Date): Promise<ClaimedTarget | null> {
    const claim: Claim = { job, windowStart, now };
    await this.claims.add(claim);
    return claim.claimed ? claimedTarget(job, claim.claimed) : null;
  }

  recordContainer(target: TargetRef, containerId: string): Promise<void> {
    return this.containers.add({ target, containerId });
  }

  recordPublishSent(target: TargetRef, sentAt: Date): Promise<void> {
    return this.sends.add({ target, sentAt });
  }

  /** Records a target's outcome; answers the post's targets left unsettled (undefined: settled already). */
  async recordOutcome(target: TargetRef, outcome: TargetOutcome): Promise<number | undefined> {
    const item: Outcome = { target, outcome };
    await this.outcomes.add(item);
    return item.left;
  }

  private async claimBatch(batch: Claim[]): Promise<void> {
    // The same target twice in one batch (a job delivered twice at once): only the first may claim.
    const first = new Map<string, Claim>();
    for (const claim of batch) {
      const key = keyOf(claim.job.post_id, claim.job.account_id);
      if (!first.has(key)) first.set(key, claim);
    }
    const claims = [...first.values()];
    const { rows } = await this.pool.query<ClaimedRow & { postId: string; accountId: string }>({
      ...sql.CLAIM_TARGETS,
      values: [
        claims.map((c) => c.job.post_id),
        claims.map((c) => c.job.account_id),
        claims.map((c) => c.job.attempt),
        claims.map((c) => c.windowStart),
        claims.map((c) => c.now),
      ],
    });
    for (const { postId, accountId, ...claimed } of rows) {
      const claim = first.get(keyOf(postId, accountId));
      if (claim) claim.claimed = claimed;
    }
  }

  private async outcomeBatch(batch: Outcome[]): Promise<void> {
    const published = batch.map(({ outcome }) => (outcome.status === 'published' ? outcome : undefined));
    const { rows } = await this.pool.query<{ postId: string; accountId: string; unsettled: number | null }>({
      ...sql.RECORD_OUTCOMES,
      values: [
        batch.map((o) => o.target.postId),
        batch.map((o) => o.target.accountId),
        batch.map((o) => o.outcome.status),
        batch.map((o) => (o.outcome.status === 'failed' ? o.outcome.error : null)),
        published.map((p) => p?.platformPostId ?? null),
        published.map((p) => p?.permalink ?? null),
        published.map((p) => p?.publishedAt ?? null),
        published.map((p) => p?.firstCommentId ?? null),
        published.map((p) => p?.firstCommentError ?? null),
      ],
    });
    const recorded = new Map(rows.map((r) => [keyOf(r.postId, r.accountId), r.unsettled]));
    // Two targets of one post settled in the same batch both see its final count; only the
    // first is told it was the last, so the post is settled once.
    const told = new Set<string>();
    for (const item of batch) {
      const key = keyOf(item.target.postId, item.target.accountId);
      if (!recorded.has(key)) continue;
      const left = recorded.get(key) ?? null;
      recorded.delete(key);
      // A post no longer publishing (moved on meanwhile) counts as settled already, as before.
      if (left === null) continue;
      item.left = told.has(item.target.postId) ? Math.max(left, 1) : left;
      told.add(item.target.postId);
    }
  }

  private async write(statement: { name: string; text: string }, values: unknown[]): Promise<void> {
    await this.pool.query({ ...statement, values });
  }
}
