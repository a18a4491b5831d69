import { randomUUID } from 'node:crypto';
import { LocalCache } from '@svc/cache';
import type { Keyring } from '@svc/crypto';
import { newId } from '@svc/ids';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { Clock } from '../clock.ts';
import type { DeliveryMetrics } from '../metrics.ts';
import { type AttemptRecord, abandonClaim, type ClaimedAttempt, claimDue, type Lane } from './queue.ts';
import { AttemptRecorder } from './recorder.ts';
import { nextAttemptAfterFailure } from './schedule.ts';
import { deliveryHeaders } from './signature.ts';
import type { WebhookTransport } from './transport.ts';

/** After a failed claim (database down, say), wait this long before the next. */
const CLAIM_RETRY_MS = 1_000;

export interface WorkerOptions {
  /** Attempts in flight in this replica, in all. */
  concurrency: number;
  /** Attempts in flight in this replica to one partner's endpoint. */
  perEndpoint: number;
  /** Share of `concurrency` retries may take; the rest is kept for first attempts. */
  retrySharePercent: number;
  pollMs: number;
  timeoutMs: number;
}

/**
 * Runs due delivery attempts. The schedule lives in Postgres (queue.ts); this loop only claims
 * what is due, up to its free slots, and sends it. Isolation between partners:
 *  - at most `perEndpoint` attempts per partner endpoint are in flight, and a partner at its limit
 *    is left out of the next claims, so an endpoint that hangs until the deadline or fails every
 *    time holds a few slots and never the rest;
 *  - first attempts are claimed before retries, and retries may hold only their share of the
 *    slots, so a backlog of retries never starves fresh events;
 *  - a claim takes only rows whose time has come (by the injectable clock): never early.
 * The claim leases a row for twice the deadline plus a margin; if this process dies mid-attempt,
 * another replica (or this one after a restart) takes it up when the lease runs out.
 */
export class DeliveryWorker {
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private retries = 0;
  private readonly running = new Set<Promise<unknown>>();
  /** Webhook secrets opened from their sealed form: decrypting one per attempt showed under load. */
  private readonly secrets = new LocalCache<string>({ maxEntries: 10_000, maxAgeMs: 3_600_000 });
  private readonly recorder: AttemptRecorder;
  private wakeUp: (() => void) | undefined;
  private kicked = false;
  private loop: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly keyring: Keyring,
    private readonly transport: WebhookTransport,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: WorkerOptions,
    private readonly metrics?: DeliveryMetrics,
  ) {
    this.recorder = new AttemptRecorder(pool);
  }

  /** How long a claimed attempt stays reserved for the worker that claimed it. */
  get leaseMs(): number {
    return this.options.timeoutMs * 2 + 5_000;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Look for due attempts now (called after a commit that scheduled one). */
  kick(): void {
    this.kicked = true;
    this.wakeUp?.();
  }

  /** Stops claiming and waits for the attempts in flight to be sent and recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
    await Promise.allSettled([...this.running]);
    this.secrets.close();
  }

  /**
   * Runs one attempt that the caller has already claimed (the ping of POST /v1/webhook/test takes
   * this path) and answers with its record, counted against the same limits as any other.
   */
  async runClaimed(claim: ClaimedAttempt): Promise<AttemptRecord | null> {
    this.track(claim.partnerId, 'first', 1);
    try {
      return await this.attempt(claim);
    } finally {
      this.track(claim.partnerId, 'first', -1);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.kicked = false;
      let claimed = 0;
      try {
        claimed = await this.fill();
      } catch (error) {
        this.logger.warn({ err: error }, 'claiming due deliveries failed; will retry');
        await this.sleep(CLAIM_RETRY_MS);
        continue;
      }
      if (this.stopped) break;
      // Claim again at once while work keeps coming and slots are free; otherwise wait for a kick,
      // a finished attempt or the poll interval.
      if (this.kicked || (claimed > 0 && this.freeSlots() >= this.refillBatch())) continue;
      await this.sleep(this.options.pollMs);
    }
  }

  private async fill(): Promise<number> {
    const free = this.freeSlots();
    if (free < this.refillBatch() && this.total > 0) return 0;
    let claimed = 0;
    const first = await this.claim('first', free);
    claimed += first.length;
    const retryRoom = Math.min(
      this.freeSlots(),
      Math.floor((this.options.concurrency * this.options.retrySharePercent) / 100) - this.retries,
    );
    if (retryRoom > 0) claimed += (await this.claim('retry', retryRoom)).length;
    return claimed;
  }

  private async claim(lane: Lane, limit: number): Promise<ClaimedAttempt[]> {
    if (limit <= 0) return [];
    const now = this.clock.now();
    const claims = await claimDue(this.pool, {
      lane,
      now,
      leaseUntil: new Date(now.getTime() + this.leaseMs),
      limit,
      inFlight: this.inFlight,
      perEndpointLimit: this.options.perEndpoint,
      claimToken: randomUUID(),
    });
    for (const claim of claims) this.dispatch(claim, lane);
    return claims;
  }

  private dispatch(claim: ClaimedAttempt, lane: Lane): void {
    this.track(claim.partnerId, lane, 1);
    const running: Promise<unknown> = this.attempt(claim)
      .catch((error: unknown) =>
        this.logger.error({ err: error, event_id: claim.eventId }, 'delivery attempt could not be recorded'),
      )
      .finally(() => {
        this.track(claim.partnerId, lane, -1);
        this.running.delete(running);
        this.wakeUp?.();
      });
    this.running.add(running);
  }

  /** Sends one claimed attempt, records it and moves the schedule. */
  private async attempt(claim: ClaimedAttempt): Promise<AttemptRecord | null> {
    if (claim.url === null || claim.secretSealed === null) {
      await abandonClaim(this.pool, claim.eventId, claim.claimToken, this.clock.now());
      return null;
    }
    const secret = this.secretOf(claim.partnerId, claim.secretSealed);
    const sentAt = this.clock.now();
    const headers = deliveryHeaders({ id: claim.eventId, type: claim.eventType }, claim.body, secret, sentAt);
    const outcome = await this.transport.send(claim.url, claim.body, headers);
    const now = this.clock.now();
    const number = claim.attemptCount + 1;
    const next = outcome.succeeded ? null : nextAttemptAfterFailure(number, claim.maxAttempts, now);
    const record: AttemptRecord = {
      id: newId('delivery', sentAt.getTime()),
      eventId: claim.eventId,
      claimToken: claim.claimToken,
      number,
      url: claim.url,
      attemptedAt: sentAt,
      ...outcome,
      state: outcome.succeeded ? 'delivered' : next ? 'pending' : 'undelivered',
      nextAttemptAt: next,
      now,
    };
    await this.recorder.record(record);
    this.metrics?.attempt(record);
    if (record.state === 'undelivered')
      this.logger.info(
        { event_id: claim.eventId, attempts: number },
        'event undelivered after its last attempt',
      );
    return record;
  }

  private secretOf(partnerId: string, sealed: string): string {
    let secret = this.secrets.peek(sealed);
    if (secret === undefined) {
      secret = this.keyring.decrypt(sealed, partnerId);
      this.secrets.set(sealed, secret);
    }
    return secret;
  }

  private track(partnerId: string, lane: Lane, delta: 1 | -1): void {
    this.total += delta;
    if (lane === 'retry') this.retries += delta;
    const count = (this.inFlight.get(partnerId) ?? 0) + delta;
    if (count > 0) this.inFlight.set(partnerId, count);
    else this.inFlight.delete(partnerId);
  }

  private freeSlots(): number {
    return this.options.concurrency - this.total;
  }

  /** Refill in batches rather than one claim per finished attempt. */
  private refillBatch(): number {
    return Math.max(1, Math.floor(this.options.concurrency / 8));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
