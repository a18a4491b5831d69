import { type EventEnvelope, runConsumer, SIGNALS } from '@svc/bus';
import { every } from '@svc/ops';
import type { PublishingContext } from './context.ts';
import { purgeWorkspaceMedia } from './media/media.ts';
import { startDuePosts } from './pipeline/scheduler.ts';
import { handlePublishJob, type PublishJob } from './pipeline/worker.ts';

/** Jobs in flight per replica: publishing waits on the network, not on CPU. */
const PUBLISH_CONCURRENCY = 16;
const SCHEDULER_TICK_MS = 1_000;

/** The publish workers, the scheduler and the purge of deleted workspaces. */
export async function startWorkers(ctx: PublishingContext): Promise<{ stop(): Promise<void> }> {
  const consumers = [
    await runConsumer(
      ctx.bus,
      ctx.logger,
      {
        stream: 'jobs',
        durable: 'publishing-workers',
        types: [SIGNALS.publishTarget],
        concurrency: PUBLISH_CONCURRENCY,
        // Jobs run for minutes at most; the consumer's heartbeat keeps a live one from redelivery.
        ackWaitMs: 30_000,
      },
      (_type, payload) => handlePublishJob(ctx, payload as PublishJob),
    ),
    await runConsumer(
      ctx.bus,
      ctx.logger,
      { stream: 'internal', durable: 'publishing-workspace-deleted', types: [SIGNALS.workspaceDeleted] },
      (_type, payload) => purgeWorkspace(ctx, (payload as EventEnvelope).workspace),
    ),
  ];
  const scheduler = every(SCHEDULER_TICK_MS, () => startDuePosts(ctx), 'scheduler', ctx.logger);
  return {
    async stop() {
      clearInterval(scheduler);
      for (const consumer of consumers) await consumer.stop();
    },
  };
}

/** `workspace.deleted`: posts and targets go, then media records and files. */
async function purgeWorkspace(ctx: PublishingContext, workspaceId: string | null): Promise<void> {
  if (!workspaceId) return;
  await ctx.db.post.deleteMany({ where: { workspaceId } });
  await purgeWorkspaceMedia(ctx, workspaceId);
}
