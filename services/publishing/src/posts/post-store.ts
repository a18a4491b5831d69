import { jobRow, type OutboxRelay, type OutboxRow, outboxColumns, SUBJECTS, writeOutbox } from '@svc/bus';
import { type Caller, ONE_SNAPSHOT, pageWindow, transaction } from '@svc/db';
import type pg from 'pg';
import type { Db } from '../db.ts';
import type { Post, PostTarget } from '../generated/prisma/client.ts';
import {
  type NewPost,
  type NewTarget,
  type PostChange,
  type PostQuery,
  type PostWithTargets,
  postFilter,
  postOfRows,
  type Queryable,
  type TargetOutcome,
  type TargetRef,
  targetColumns,
} from './post-rows.ts';
import * as sql from './post-statements.ts';
import { TargetSteps } from './target-steps.ts';

/**
 * Every read and write of posts, targets and their outbox rows (publish jobs, post events). Rows
 * a statement commits to the outbox are sent at once after the commit (the relay's pass is the
 * fallback), so callers never handle outbox rows.
 */
export class PostStore {
  private readonly steps: TargetSteps;

  constructor(
    private readonly pool: pg.Pool,
    private readonly db: Db,
    private readonly relay: OutboxRelay,
  ) {
    this.steps = new TargetSteps(pool);
  }

  /** The post and its targets, written with their jobs; null when a media item was deleted meanwhile. */
  async create(post: NewPost, accounts: NewTarget[]): Promise<Post | null> {
    const attempts = post.status === 'publishing' ? 1 : 0;
    const jobs = attempts === 1 ? accounts.map((a) => publishJob(post.id, a.id, 1)) : [];
    const { rows } = await this.pool.query<Post>({
      ...sql.CREATE_POST,
      values: [
        post.id,
        post.partnerId,
        post.workspaceId,
        post.externalRef,
        post.caption,
        post.mediaIds,
        JSON.stringify(post.media),
        post.scheduleAt,
        post.status,
        attempts,
        post.createdBy,
        JSON.stringify(post.options),
        new Set(post.mediaIds).size,
        post.title,
        post.reel && JSON.stringify(post.reel),
        ...targetColumns(post.id, accounts).slice(1),
        ...outboxColumns(jobs),
      ],
    });
    if (!rows[0]) return null;
    this.sendCommitted(jobs);
    return rows[0];
  }

  /** A post and its targets by id, in one round trip (no scope check: callers check the row). */
  async read(id: string, db: Queryable = this.pool): Promise<PostWithTargets | null> {
    const { rows } = await db.query({ ...sql.SELECT_POST_WITH_TARGETS, values: [id] });
    return postOfRows(rows);
  }

  async list(caller: Caller, query: PostQuery): Promise<{ posts: PostWithTargets[]; total: number }> {
    const where = postFilter(caller, query);
    const [posts, total] = await this.db.$transaction(
      [
        this.db.post.findMany({
          where,
          include: { targets: true },
          orderBy: { id: 'asc' },
          ...pageWindow(query.page, query.limit),
        }),
        this.db.post.count({ where }),
      ],
      ONE_SNAPSHOT,
    );
    return { posts, total };
  }

  /**
   * Writes a change of `post` and answers the post as written (without reading it again); false
   * when one of its media was deleted meanwhile, null when the post itself was (a workspace purge).
   */
  async update(post: PostWithTargets, change: PostChange): Promise<PostWithTargets | false | null> {
    return transaction(this.pool, async (tx) => {
      if (!(await lockMedia(tx, change.mediaIds))) return false;
      const { caption, mediaIds, scheduleAt, status, externalRef } = change;
      const media = JSON.stringify(change.media);
      const options = JSON.stringify(change.options);
      const reel = change.reel && JSON.stringify(change.reel);
      const values = [
        post.id,
        caption,
        mediaIds,
        media,
        scheduleAt,
        status,
        externalRef,
        options,
        change.title,
        reel,
      ];
      // The post first: once it is locked by this update, its targets can be replaced safely.
      const { rows } = await tx.query<Post>({ ...sql.UPDATE_POST, values });
      if (!rows[0]) return null;
      let targets = post.targets;
      if (change.targets) {
        await tx.query({ ...sql.DELETE_TARGETS, values: [post.id] });
        const inserted = await tx.query<PostTarget>({
          ...sql.INSERT_TARGETS,
          values: targetColumns(post.id, change.targets),
        });
        targets = inserted.rows;
      } else if (change.format) {
        const changed = await tx.query<PostTarget>({
          ...sql.SET_TARGET_FORMAT,
          values: [post.id, change.format],
        });
        const byAccount = new Map(changed.rows.map((t) => [t.accountId, t]));
        targets = targets.map((t) => byAccount.get(t.accountId) ?? t);
      }
      return { ...rows[0], targets };
    });
  }

  /**
   * Moves `post` to publishing for its next attempt, its unpublished targets back to pending, and
   * queues their jobs; answers the post as written, or null when another caller moved it first.
   */
  async startPublishing(post: PostWithTargets): Promise<PostWithTargets | null> {
    const attempt = post.attempts + 1;
    const started = await transaction(this.pool, async (tx) => {
      const moved = await tx.query<Post>({
        ...sql.START_PUBLISHING,
        values: [post.id, post.status, attempt],
      });
      if (!moved.rows[0]) return null;
      const reset = await tx.query<PostTarget>({ ...sql.RESET_UNPUBLISHED_TARGETS, values: [post.id] });
      const targets = reset.rows;
      const jobs = await writeOutbox(
        tx,
        targets.map((t) => publishJob(post.id, t.accountId, attempt)),
      );
      const published = post.targets.filter((t) => t.status === 'published');
      return { post: { ...moved.rows[0], targets: [...published, ...targets] }, jobs };
    });
    if (!started) return null;
    this.sendCommitted(started.jobs);
    started.post.targets.sort((a, b) => a.position - b.position);
    return started.post;
  }

  /** Starts scheduled posts whose time has come (SKIP LOCKED: replicas share them); answers how many. */
  async startDue(now: Date, batchSize: number): Promise<number> {
    const { started, jobs } = await transaction(this.pool, async (tx) => {
      const due = await tx.query<{ id: string; attempts: number; accounts: string[] }>({
        ...sql.START_DUE,
        values: [now, batchSize],
      });
      const rows = due.rows.flatMap((post) =>
        post.accounts.map((accountId) => publishJob(post.id, accountId, post.attempts)),
      );
      return { started: due.rowCount ?? 0, jobs: await writeOutbox(tx, rows) };
    });
    this.sendCommitted(jobs);
    return started;
  }

  /** Claims a target for this attempt; null when settled already, superseded or deferred (see CLAIM_TARGETS). */
  claimTarget(job: { post_id: string; account_id: string; attempt: number }, windowStart: Date, now: Date) {
    return this.steps.claim(job, windowStart, now);
  }

  /** Leaves the target for now: its job is queued again at `until` (see resumeWaiting). */
  async defer(target: TargetRef, until: Date, now: Date): Promise<void> {
    await this.pool.query({ ...sql.DEFER_TARGET, values: [target.postId, target.accountId, until, now] });
  }

  /** Queues again the jobs of deferred targets whose time has come; answers how many. */
  async resumeWaiting(now: Date, batchSize: number): Promise<number> {
    const jobs = await transaction(this.pool, async (tx) => {
      const due = await tx.query<{ postId: string; accountId: string; attempts: number; waitingUntil: Date }>(
        {
          ...sql.RESUME_WAITING,
          values: [now, batchSize],
        },
      );
      return writeOutbox(
        tx,
        due.rows.map((t) => publishJob(t.postId, t.accountId, t.attempts, t.waitingUntil.getTime())),
      );
    });
    this.sendCommitted(jobs);
    return jobs.length;
  }

  /** Progress recorded before the next step, so a worker that dies resumes from it. */
  recordContainer(target: TargetRef, containerId: string): Promise<void> {
    return this.steps.recordContainer(target, containerId);
  }

  recordPublishSent(target: TargetRef, sentAt: Date): Promise<void> {
    return this.steps.recordPublishSent(target, sentAt);
  }

  /** Records a target's outcome; answers the post's targets left unsettled (undefined: settled already). */
  recordOutcome(target: TargetRef, outcome: TargetOutcome): Promise<number | undefined> {
    return this.steps.recordOutcome(target, outcome);
  }

  /** The settled post's outcome and its event, written only while it is publishing; false if not. */
  /** The posts of these ids with their targets (a post deleted meanwhile is left out). */
  async readMany(ids: string[]): Promise<PostWithTargets[]> {
    const { rows } = await this.pool.query({ ...sql.SELECT_POSTS_WITH_TARGETS, values: [ids] });
    const byPost = Map.groupBy(rows as Record<string, unknown>[], (row) => row.id);
    return [...byPost.values()].flatMap((postRows) => postOfRows(postRows) ?? []);
  }

  /**
   * Writes posts' outcomes, each with its event, in one statement; a post no longer publishing
   * (settled by another writer) is left as it is. Answers the ids of the posts settled here.
   */
  async writeSettlements(settlements: { post: Post; event: OutboxRow }[]): Promise<Set<string>> {
    if (settlements.length === 0) return new Set();
    const posts = settlements.map((s) => s.post);
    const events = settlements.map((s) => s.event);
    const { rows } = await this.pool.query<{ id: string }>({
      ...sql.SETTLE_POSTS,
      values: [
        posts.map((p) => p.id),
        posts.map((p) => p.status),
        posts.map((p) => p.lastError),
        posts.map((p) => p.publishedAt),
        posts.map((p) => p.updatedAt),
        ...outboxColumns(events),
        events.map((e) => e.id),
      ],
    });
    const written = new Set(rows.map((r) => r.id));
    this.sendCommitted(events.filter((e) => written.has(e.id)));
    return new Set(settlements.filter((s) => written.has(s.event.id)).map((s) => s.post.id));
  }

  async status(id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ status: string }>({ ...sql.POST_STATUS, values: [id] });
    return rows[0]?.status;
  }

  /** When the account's posts in the window were published, oldest first. */
  async publishedSince(accountId: string, since: Date): Promise<Date[]> {
    const values = [accountId, since];
    const { rows } = await this.pool.query<{ publishedAt: Date }>({ ...sql.PUBLISHED_IN_WINDOW, values });
    return rows.map((r) => r.publishedAt);
  }

  /** The oldest post of the workspace that lists this media and may still be sent, if any. */
  async unpublishedPostWithMedia(tx: Queryable, workspaceId: string, mediaId: string) {
    const values = [workspaceId, mediaId];
    const { rows } = await tx.query<{ id: string; status: string }>({
      ...sql.UNPUBLISHED_POST_WITH_MEDIA,
      values,
    });
    return rows[0];
  }

  async deleteWorkspacePosts(workspaceId: string): Promise<void> {
    await this.db.post.deleteMany({ where: { workspaceId } });
  }

  private sendCommitted(rows: OutboxRow[]): void {
    void this.relay.publishCommitted(rows);
  }
}

/** The outbox row of one target's publish job for an attempt. */
const publishJob = (postId: string, accountId: string, attempt: number, resumes?: number) =>
  jobRow(SUBJECTS.publishJob, {
    post_id: postId,
    account_id: accountId,
    attempt,
    ...(resumes ? { resumes } : {}),
  });

async function lockMedia(tx: pg.PoolClient, mediaIds: string[]): Promise<boolean> {
  if (mediaIds.length === 0) return true;
  const { rows } = await tx.query({ ...sql.LOCK_MEDIA, values: [mediaIds] });
  return rows.length === new Set(mediaIds).size;
}
