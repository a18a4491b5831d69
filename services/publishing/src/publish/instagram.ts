import type { AccountToken } from '@svc/directory';
import { type ContainerStatus, GraphApiError, type ReelContainer } from '@svc/graph-client';
import { pollWithBackoff } from '@svc/net';
import type { ClaimedTarget, Published } from '../posts/post-rows.ts';
import { isVideo, NetworkPublisher, PublishRefused, StillProcessing } from './network-publisher.ts';

/**
 * Instagram: container (or carousel items then parent) → FINISHED → media_publish → permalink. An
 * image's container is published at once and waited for only when Meta answers it is not ready.
 * The container id and the moment media_publish was sent are recorded before the next step, so a
 * worker that dies resumes where it stopped, and an unknown outcome is settled by asking the
 * network (container PUBLISHED, the account's recent media) instead of posting again. A container
 * still processing after a short wait (a video, always) gives the worker's slot back and is
 * checked again later (StillProcessing).
 */
const IMAGE_POLL = { firstDelayMs: 200, maxDelayMs: 2_000, deadlineMs: 30_000 };

type SentItem = { url: string; video: boolean; id: string };

export class InstagramPublisher extends NetworkPublisher {
  async publish(target: ClaimedTarget, account: AccountToken): Promise<Published> {
    const { graph, store } = this.tools;
    let containerId = target.containerId;
    if (target.publishSentAt && containerId) {
      const adopted = await this.adoptIfPublished(target, account, containerId, target.publishSentAt);
      if (adopted) return adopted;
    }
    // An image container is ready at once nearly always: it is published without asking first,
    // and its status is asked only when the publish is refused (one Graph call less per image).
    let checked = true;
    if (!containerId) {
      const created = await this.createContainer(target, account);
      containerId = created;
      checked = hasVideo(target);
      // Recorded while a video's status is checked: both are done before media_publish is sent,
      // and the container is recorded before the job gives its slot back to wait for processing.
      const [recorded, ready] = await Promise.allSettled([
        store.recordContainer(target, created),
        checked ? this.awaitReady(target, account, created) : undefined,
      ]);
      if (recorded.status === 'rejected') throw recorded.reason;
      if (ready.status === 'rejected') throw ready.reason;
    } else {
      await this.awaitReady(target, account, containerId);
    }
    const container = containerId;
    const send = () =>
      this.sendOnce(
        target,
        async () => (await graph.instagram.publish(account.token, account.platformId, container)).id,
        (sentAt) => this.adoptIfPublished(target, account, container, sentAt),
      );
    const sent = await send().catch(async (error: unknown) => {
      if (checked || !(error instanceof GraphApiError) || error.kind !== 'media') throw error;
      // Refused unasked: not ready yet (9007/2207027) is waited for and sent again; a container
      // that failed is refused with Meta's reason; a ready one means the refusal was another.
      await this.awaitReady(target, account, container);
      if ((error.graph.subcode ?? 0) !== NOT_READY_SUBCODE) throw error;
      return send();
    });
    if ('adopted' in sent) return sent.adopted;
    return { platformPostId: sent.id, permalink: await graph.instagram.permalink(account.token, sent.id) };
  }

  private async createContainer(target: ClaimedTarget, { token, platformId }: AccountToken): Promise<string> {
    const { instagram } = this.tools.graph;
    const media = await this.sentMedia(target);
    const [first] = media;
    if (!first) throw new PublishRefused('photo_network needs at least one image or video');
    if (target.format === 'reel')
      return (await instagram.createReelContainer(token, platformId, await this.reelOf(target, first))).id;
    if (target.format === 'story')
      return (await instagram.createStoryContainer(token, platformId, itemOf(first))).id;
    if (media.length === 1)
      return (
        await instagram.createImageContainer(token, platformId, {
          imageUrl: first.url,
          caption: target.caption,
        })
      ).id;
    const children: string[] = [];
    for (const [index, item] of media.entries()) {
      try {
        children.push((await instagram.createCarouselItem(token, platformId, itemOf(item))).id);
      } catch (error) {
        if (error instanceof GraphApiError) throw attributed(error, index, item);
        throw error;
      }
    }
    return (await instagram.createCarousel(token, platformId, { children, caption: target.caption })).id;
  }

  /** The Reel's container as the post's Reel settings say (its cover an image URL or a frame). */
  private async reelOf(target: ClaimedTarget, video: SentItem): Promise<ReelContainer> {
    const reel = target.reel;
    const cover = reel?.cover;
    const coverUrl =
      target.cover && cover && 'media' in cover
        ? await this.tools.files.publishableUrl(target.cover, target.network)
        : undefined;
    return {
      videoUrl: video.url,
      caption: target.caption,
      shareToFeed: reel?.share_to_feed ?? true,
      ...(coverUrl ? { coverUrl } : {}),
      ...(cover && 'offset_ms' in cover ? { thumbOffsetMs: cover.offset_ms } : {}),
      ...(reel?.collaborators.length ? { collaborators: reel.collaborators } : {}),
      ...(reel?.location ? { locationId: reel.location } : {}),
    };
  }

  /**
   * Returns once the container is ready to publish. An image is waited for a few seconds in the
   * slot; a video is checked once, and while it processes the job gives its slot back.
   */
  private async awaitReady(
    target: ClaimedTarget,
    { token }: AccountToken,
    containerId: string,
  ): Promise<void> {
    const { instagram } = this.tools.graph;
    const check = async () => readiness(await instagram.containerStatus(token, containerId), target);
    const ready = hasVideo(target) ? await check() : await pollWithBackoff(check, IMAGE_POLL);
    if (!ready) throw new StillProcessing(`container ${containerId}`);
  }

  /**
   * Did a media_publish whose answer we never saw go through? A PUBLISHED container says yes; the
   * media is then the account's recent post with this caption (a Story: its recent Story),
   * published after we sent the call.
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
    const story = target.format === 'story';
    const recent = story
      ? await instagram.recentStories(token, platformId)
      : await instagram.recentMedia(token, platformId);
    const match = recent.find(
      (m) =>
        (story || (m.caption ?? '') === target.caption) && (!m.timestamp || Date.parse(m.timestamp) >= since),
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

/** Meta's answer to a media_publish sent before the container finished processing. */
const NOT_READY_SUBCODE = 2207027;

const hasVideo = (target: ClaimedTarget) => target.media.some(isVideo);

const itemOf = (item: SentItem) => (item.video ? { videoUrl: item.url } : { imageUrl: item.url });

/**
 * Ready (true), still processing (null), or refused: a container in ERROR or EXPIRED fails the
 * target with Meta's reason and the item, when there is one item.
 */
function readiness(status: ContainerStatus, target: ClaimedTarget): true | null {
  if (status.status_code === 'FINISHED' || status.status_code === 'PUBLISHED') return true;
  if (status.status_code === 'IN_PROGRESS') return null;
  const [only] = target.media;
  const item = target.media.length === 1 && only ? ` media item 1 (${only.id})` : ' the media';
  throw new PublishRefused(
    `the network could not process${item}: ${status.status ?? status.status_code}${status.status_code === 'EXPIRED' ? ' (the container expired)' : ''}`,
  );
}

/** A carousel refusal names the item: "media item 2 (med_…): <the provider's message>". */
function attributed(error: GraphApiError, index: number, media: { id: string }): GraphApiError {
  error.message = `media item ${index + 1} (${media.id}): ${error.message}`;
  return error;
}
