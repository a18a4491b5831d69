import { GraphApiError } from '@svc/graph-client';
import type { PublishingContext } from '../context.ts';
import { publishableMediaUrl } from '../media/instagram-ready.ts';
import { recordPublishSent } from './targets.ts';
import { askUntilSettled } from './unknown-outcome.ts';
import type { Published, TargetJob } from './worker.ts';

/**
 * Pages: text → /feed, one image → /photos, several → unpublished photos then one /feed post
 * with attached_media. As for Instagram, the moment the call is sent is recorded first; after an
 * unknown outcome the Page's recent posts tell whether it went through.
 */
export async function publishToPage(ctx: PublishingContext, job: TargetJob): Promise<Published> {
  const { target, token, platformId } = job;
  if (target.publishSentAt) {
    const adopted = await adoptIfPosted(ctx, job, target.publishSentAt);
    if (adopted) return adopted;
  }
  const sentAt = ctx.now();
  await recordPublishSent(ctx.pool, target, sentAt);
  let id: string;
  try {
    id = await send();
  } catch (error) {
    if (error instanceof GraphApiError && (error.kind === 'timeout' || error.kind === 'network')) {
      const adopted = await askUntilSettled(() => adoptIfPosted(ctx, job, sentAt));
      if (adopted) return adopted;
    }
    throw error;
  }
  return { platformPostId: id, permalink: await ctx.graph.pages.permalink(token, id) };

  async function send(): Promise<string> {
    const urls = await Promise.all(target.media.map((m) => publishableMediaUrl(ctx, m, 'page_network')));
    if (urls.length === 0)
      return (await ctx.graph.pages.postToFeed(token, platformId, { message: target.caption })).id;
    if (urls.length === 1) {
      const photo = await ctx.graph.pages.postPhoto(token, platformId, {
        url: urls[0] ?? '',
        caption: target.caption,
      });
      return photo.post_id ?? photo.id;
    }
    return (
      await ctx.graph.pages.postMultiPhoto(token, platformId, { message: target.caption, photoUrls: urls })
    ).id;
  }
}

async function adoptIfPosted(ctx: PublishingContext, job: TargetJob, sentAt: Date) {
  const recent = await ctx.graph.pages.recentPosts(job.token, job.platformId);
  const since = sentAt.getTime() - 60_000;
  const match = recent.find(
    (p) =>
      (p.message ?? '') === job.target.caption && (!p.created_time || Date.parse(p.created_time) >= since),
  );
  if (!match) return null;
  ctx.logger.info(
    { post: job.target.postId, page_post: match.id },
    'adopted a page post whose answer was lost',
  );
  return { platformPostId: match.id, permalink: match.permalink_url ?? null };
}
