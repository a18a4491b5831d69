import type { AccountToken } from '@svc/directory';
import { GraphApiError } from '@svc/graph-client';
import { pollWithBackoff } from '@svc/net';
import type { ClaimedTarget, Published } from '../posts/post-rows.ts';
import { NetworkPublisher, PublishRefused } from './network-publisher.ts';

/**
 * Instagram: container (or carousel children then parent) → wait until FINISHED → media_publish
 * → permalink. The container id and the moment media_publish was sent are recorded before the
 * next step, so a worker that dies resumes where it stopped, and an unknown outcome is settled by
 * asking the network (container PUBLISHED, the account's recent media) instead of posting again.
 */
const CONTAINER_POLL = { firstDelayMs: 200, maxDelayMs: 5_000, deadlineMs: 5 * 60_000 };

export class InstagramPublisher extends NetworkPublisher {
  async publish(target: ClaimedTarget, account: AccountToken): Promise<Published> {
    const { graph, store } = this.tools;
    let containerId = target.containerId;
    if (target.publishSentAt && containerId) {
      const adopted = await this.adoptIfPublished(target, account, containerId, target.publishSentAt);
      if (adopted) return adopted;
    }
    if (!containerId) {
      containerId = await this.createContainer(target, account);
      // Recorded while the status is checked: both are done before media_publish is sent.
      await Promise.all([
        store.recordContainer(target, containerId),
        this.waitUntilReady(account, containerId),
      ]);
    } else {
      await this.waitUntilReady(account, containerId);
    }
    const container = containerId;
    const sent = await this.sendOnce(
      target,
      async () => (await graph.instagram.publish(account.token, account.platformId, container)).id,
      (sentAt) => this.adoptIfPublished(target, account, container, sentAt),
    );
    if ('adopted' in sent) return sent.adopted;
    return { platformPostId: sent.id, permalink: await graph.instagram.permalink(account.token, sent.id) };
  }

  private async createContainer(target: ClaimedTarget, { token, platformId }: AccountToken): Promise<string> {
    const { instagram } = this.tools.graph;
    const urls = await this.mediaUrls(target);
    const caption = target.caption;
    if (urls.length === 1)
      return (await instagram.createImageContainer(token, platformId, { imageUrl: urls[0] ?? '', caption }))
        .id;
    const children: string[] = [];
    for (const [index, imageUrl] of urls.entries()) {
      try {
        children.push((await instagram.createCarouselItem(token, platformId, { imageUrl })).id);
      } catch (error) {
        if (error instanceof GraphApiError) throw attributed(error, index, target.media[index]);
        throw error;
      }
    }
    return (await instagram.createCarousel(token, platformId, { children, caption })).id;
  }

  private async waitUntilReady({ token }: AccountToken, containerId: string): Promise<void> {
    const ready = await pollWithBackoff(async () => {
      const status = await this.tools.graph.instagram.containerStatus(token, containerId);
      if (status.status_code === 'FINISHED' || status.status_code === 'PUBLISHED') return true;
      if (status.status_code === 'ERROR' || status.status_code === 'EXPIRED')
        throw new PublishRefused(
          `the network could not process the media: ${status.status ?? status.status_code}`,
        );
      return null;
    }, CONTAINER_POLL);
    if (!ready) throw new PublishRefused('the network did not finish processing the media within 5 minutes');
  }

  /**
   * Did a media_publish whose answer we never saw go through? A PUBLISHED container says yes; the
   * media is then the account's recent post with this caption, published after we sent the call.
   */
  private async adoptIfPublished(
    target: ClaimedTarget,
    { token, platformId }: AccountToken,
    containerId: string,
    sentAt: Date,
  ): Promise<Published | null> {
    const { instagram } = this.tools.graph;
    const status = await instagram.containerStatus(token, containerId);
    if (status.status_code !== 'PUBLISHED') return null;
    const since = sentAt.getTime() - 60_000;
    const recent = await instagram.recentMedia(token, platformId);
    const match = recent.find(
      (m) => (m.caption ?? '') === target.caption && (!m.timestamp || Date.parse(m.timestamp) >= since),
    );
    if (!match) return null;
    this.tools.logger.info(
      { post: target.postId, media: match.id },
      'adopted a publish whose answer was lost',
    );
    return {
      platformPostId: match.id,
      permalink: match.permalink ?? (await instagram.permalink(token, match.id)),
    };
  }
}

/** A carousel refusal names the item: "media item 2 (med_…): <the provider's message>". */
function attributed(error: GraphApiError, index: number, media: { id: string } | undefined): GraphApiError {
  error.message = `media item ${index + 1} (${media?.id ?? 'unknown'}): ${error.message}`;
  return error;
}
