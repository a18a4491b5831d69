import { type Bus, CONSUMERS } from '@svc/bus';
import type { ServiceRuntime } from '@svc/ops';
import type { PostStore } from '../posts/post-store.ts';
import type { PublishJobs } from './publish-job.ts';

const SCHEDULER_TICK_MS = 1_000;
/** Scheduled posts started per scheduler tick and replica. */
const DUE_BATCH = 50;

/**
 * The publish worker: takes publish jobs from the JOBS work queue (ack wait from the catalog,
 * `concurrency` jobs at once), and starts scheduled posts whose time has come (claimed with SKIP LOCKED, so
 * several replicas share the work and a post starts once), and queues again the jobs of targets
 * deferred while the network throttled or was down. Targets whose account was disconnected
 * meanwhile fail in their job (spec 3, rule 2).
 */
export async function runPublishWorker(
  runtime: ServiceRuntime,
  deps: { bus: Bus; jobs: PublishJobs; store: PostStore; now: () => Date; concurrency: number },
): Promise<void> {
  await runtime.consume(deps.bus, CONSUMERS.publishingWorkers, (job) => deps.jobs.handle(job), {
    concurrency: deps.concurrency,
  });
  runtime.every('scheduler', SCHEDULER_TICK_MS, () => deps.store.startDue(deps.now(), DUE_BATCH));
  runtime.every('resume deferred targets', SCHEDULER_TICK_MS, () =>
    deps.store.resumeWaiting(deps.now(), DUE_BATCH),
  );
}
