import type { PublishingContext } from '../context.ts';

const SETTLED = ['published', 'partial', 'failed'];

/**
 * `wait=true`: resolves when the post settles or after `ms`, whichever comes first. It listens to
 * the post events on NATS (a subscription, not a poll of the database) and reads the post once
 * after subscribing, so a settlement that happened just before is not missed.
 */
export async function waitForSettlement(ctx: PublishingContext, postId: string, ms: number): Promise<void> {
  if (ms <= 0) return;
  const subscription = ctx.bus.nc.subscribe(ctx.bus.subjects.subject('post.>'));
  const timer = setTimeout(() => subscription.unsubscribe(), ms);
  try {
    const post = await ctx.db.post.findUnique({ where: { id: postId }, select: { status: true } });
    if (!post || SETTLED.includes(post.status)) return;
    for await (const message of subscription) {
      const event = message.json<{ data?: { post?: { id?: string } } }>();
      if (event.data?.post?.id === postId) return;
    }
  } finally {
    clearTimeout(timer);
    subscription.unsubscribe();
  }
}
