import { type Bus, runConsumer, SIGNALS } from '@svc/bus';
import type { Logger } from '@svc/logging';
import { every } from '@svc/ops';
import type { PostStore } from '../posts/post-store.ts';
import type { PublishJob, PublishJobs } from './publish-job.ts';

/** Jobs in flight per replica: publishing waits on the network, not on CPU. */
const PUBLISH_CONCURRENCY = 16;
const SCHEDULER_TICK_MS = 1_000;
/** Scheduled posts started per scheduler tick and replica. */
const DUE_BATCH = 50;

/**
 * The publish worker: takes publish jobs from the JOBS work queue, and starts scheduled posts
 * whose time has come (claimed with SKIP LOCKED, so several replicas share the work and a post
 * starts once). Targets whose account was disconnected meanwhile fail in their job (spec 3, rule 2).
 */
export async function startPublishWorker(deps: {
  bus: Bus;
  jobs: PublishJobs;
  store: PostStore;
  logger: Logger;
  now: () => Date;
}): Promise<{ stop(): Promise<void> }> {
  const consumer = await runConsumer(
    deps.bus,
    deps.logger,
    {
      stream: 'jobs',
      durable: 'publishing-workers',
      types: [SIGNALS.publishTarget],
      concurrency: PUBLISH_CONCURRENCY,
      // Jobs run for minutes at most; the consumer's heartbeat keeps a live one from redelivery.
      ackWaitMs: 30_000,
    },
    (_type, payload) => deps.jobs.handle(payload as PublishJob),
  );
  const scheduler = every(
    SCHEDULER_TICK_MS,
    () => deps.store.startDue(deps.now(), DUE_BATCH),
    'scheduler',
    deps.logger,
  );
  return {
    async stop() {
      clearInterval(scheduler);
      await consumer.stop();
    },
  };
}
