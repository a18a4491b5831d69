import { type EventEnvelope, makeEvent, outboxRowFor, SIGNALS } from '@svc/bus';
import { currentRequestId } from '@svc/logging';
import type { PublishingContext } from './context.ts';
import type { Prisma } from './generated/prisma/client.ts';
import { type PostWithTargets, postJson } from './posts/view.ts';

/** Partner slug and current external_id of the post's workspace, read when the event is made. */
async function scopeOf(ctx: PublishingContext, workspaceId: string) {
  const { workspace, partnerSlug } = await ctx.identity.describeWorkspace({ workspaceId });
  return { partner: partnerSlug, workspace: workspaceId, external_id: workspace?.externalId ?? null };
}

export type PostOutcome = 'published' | 'partial' | 'failed';

/** `post.<outcome>` with `data.post` exactly as `GET /v1/posts/:id` shows it now. */
export async function postEvent(ctx: PublishingContext, outcome: PostOutcome, post: PostWithTargets) {
  return makeEvent(`post.${outcome}`, await scopeOf(ctx, post.workspaceId), { post: postJson(post) });
}

type OutboxInsert = Prisma.OutboxMessageCreateManyInput;

const eventRow = (event: EventEnvelope): OutboxInsert => {
  const row = outboxRowFor(event, currentRequestId());
  return { ...row, payload: row.payload as unknown as Prisma.InputJsonObject };
};

/** One publish job per target, keyed by attempt so a relay re-publish is dropped by JetStream. */
export const publishJobRow = (postId: string, accountId: string, attempt: number): OutboxInsert => ({
  id: `job_${postId}_${accountId}_${attempt}`,
  subject: SIGNALS.publishTarget,
  payload: { post_id: postId, account_id: accountId, attempt },
  requestId: currentRequestId() ?? null,
});

/** Writes events and jobs in the caller's transaction; the relay publishes them after commit. */
export async function writeOutbox(
  tx: Prisma.TransactionClient,
  items: { events?: EventEnvelope[]; jobs?: OutboxInsert[] },
): Promise<void> {
  const data = [...(items.events ?? []).map(eventRow), ...(items.jobs ?? [])];
  if (data.length > 0) await tx.outboxMessage.createMany({ data });
}
