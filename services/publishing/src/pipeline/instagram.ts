import { GraphApiError } from '@svc/graph-client';
import type { PublishingContext } from '../context.ts';
import { publishableMediaUrl } from '../media/instagram-ready.ts';
import { recordContainer, recordPublishSent } from './targets.ts';
import { askUntilSettled } from './unknown-outcome.ts';
import type { Published, TargetJob } from './worker.ts';

/**
 * Instagram: container (or carousel children then parent) → wait until FINISHED → media_publish
 * → permalink. The container id and the moment media_publish was sent are recorded before the
 * next step, so a worker that dies resumes where it stopped, and an unknown outcome is settled by
 * asking the network (container PUBLISHED, the account's recent media) instead of posting again.
 */
const POLL_START_MS = 200;
const POLL_MAX_MS = 5_000;
const POLL_DEADLINE_MS = 5 * 60_000;

export class PublishRefused extends Error {}

export async function publishToInstagram(ctx: PublishingContext, job: TargetJob): Promise<Published> {
  const { target, token, platformId } = job;
  let containerId = target.containerId;
  if (target.publishSentAt && containerId) {
    const adopted = await adoptIfPublished(ctx, job, containerId);
    if (adopted) return adopted;
  }
  if (!containerId) {
    containerId = await createContainer(ctx, job);
    // Recorded while the status is checked: both are done before media_publish is sent.
    await Promise.all([
      recordContainer(ctx.pool, target, containerId),
      waitUntilReady(ctx, token, containerId),
    ]);
  } else {
    await waitUntilReady(ctx, token, containerId);
  }
  const sentAt = ctx.now();
  await recordPublishSent(ctx.pool, target, sentAt);
  let mediaId: string;
  try {
    mediaId = (await ctx.graph.instagram.publish(token, platformId, containerId)).id;
  } catch (error) {
    // Timed out or cut off after sending: it may have gone through, or still be going through.
    // Ask (for a while) before anything else.
    if (error instanceof GraphApiError && (error.kind === 'timeout' || error.kind === 'network')) {
      const sent = { ...job, target: { ...target, publishSentAt: sentAt } };
      const adopted = await askUntilSettled(() => adoptIfPublished(ctx, sent, containerId));
      if (adopted) return adopted;
    }
    throw error;
  }
  return { platformPostId: mediaId, permalink: await ctx.graph.instagram.permalink(token, mediaId) };
}

async function createContainer(ctx: PublishingContext, job: TargetJob): Promise<string> {
  const { token, platformId, target } = job;
  const { media } = target;
  const urls = await Promise.all(media.map((m) => publishableMediaUrl(ctx, m, 'photo_network')));
  if (urls.length === 1)
    return (
      await ctx.graph.instagram.createImageContainer(token, platformId, {
        imageUrl: urls[0] ?? '',
        caption: target.caption,
      })
    ).id;
  const children: string[] = [];
  for (const [index, url] of urls.entries()) {
    try {
      children.push((await ctx.graph.instagram.createCarouselItem(token, platformId, { imageUrl: url })).id);
    } catch (error) {
      if (error instanceof GraphApiError) throw attributed(error, index, media[index]);
      throw error;
    }
  }
  return (await ctx.graph.instagram.createCarousel(token, platformId, { children, caption: target.caption }))
    .id;
}

/** A carousel refusal names the item: "media item 2 (med_…): <the provider's message>". */
function attributed(error: GraphApiError, index: number, media: { id: string } | undefined): GraphApiError {
  error.message = `media item ${index + 1} (${media?.id ?? 'unknown'}): ${error.message}`;
  return error;
}

async function waitUntilReady(ctx: PublishingContext, token: string, containerId: string): Promise<void> {
  const deadline = Date.now() + POLL_DEADLINE_MS;
  let delay = POLL_START_MS;
  for (;;) {
    const status = await ctx.graph.instagram.containerStatus(token, containerId);
    if (status.status_code === 'FINISHED' || status.status_code === 'PUBLISHED') return;
    if (status.status_code === 'ERROR' || status.status_code === 'EXPIRED')
      throw new PublishRefused(
        `the network could not process the media: ${status.status ?? status.status_code}`,
      );
    if (Date.now() + delay > deadline)
      throw new PublishRefused('the network did not finish processing the media within 5 minutes');
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, POLL_MAX_MS);
  }
}

/**
 * Did a media_publish whose answer we never saw go through? A PUBLISHED container says yes; the
 * media is then the account's recent post with this caption, published after we sent the call.
 */
async function adoptIfPublished(
  ctx: PublishingContext,
  job: TargetJob,
  containerId: string,
): Promise<Published | null> {
  const status = await ctx.graph.instagram.containerStatus(job.token, containerId);
  if (status.status_code !== 'PUBLISHED') return null;
  const since = (job.target.publishSentAt?.getTime() ?? 0) - 60_000;
  const recent = await ctx.graph.instagram.recentMedia(job.token, job.platformId);
  const match = recent.find(
    (m) => (m.caption ?? '') === job.target.caption && (!m.timestamp || Date.parse(m.timestamp) >= since),
  );
  if (!match) return null;
  ctx.logger.info({ post: job.target.postId, media: match.id }, 'adopted a publish whose answer was lost');
  return {
    platformPostId: match.id,
    permalink: match.permalink ?? (await ctx.graph.instagram.permalink(job.token, match.id)),
  };
}
