import type { AccountToken } from '@svc/directory';
import type { PageVideo } from '@svc/graph-client';
import type { ClaimedTarget, Published } from '../posts/post-rows.ts';
import { isVideo, NetworkPublisher, PublishRefused, StillProcessing } from './network-publisher.ts';

/**
 * Pages: text → /feed, one image → /photos, several → unpublished photos then one /feed post
 * with attached_media; one video → /videos; a Reel or a video Story is uploaded first (Meta
 * fetches it from our signed URL; the video id is recorded, so a resumed job finishes the same
 * upload) and published by its `finish` call; a photo Story is an unpublished photo (recorded
 * likewise) made a Story.
 * A video goes live once Meta has processed it: meanwhile the job gives its slot back
 * (StillProcessing) and the video is checked again later. After an unknown outcome the Page's
 * recent posts, its stories or the video's own state tell whether it went through.
 */
export class PagePublisher extends NetworkPublisher {
  async publish(target: ClaimedTarget, account: AccountToken): Promise<Published> {
    const video = target.media.find(isVideo);
    if (target.format === 'story' && !video) return this.photoStory(target, account);
    if (video && target.format === 'feed') return this.feedVideo(target, account);
    if (video)
      return this.uploadedVideo(target, account, target.format === 'reel' ? 'video_reels' : 'video_stories');
    return this.feedPost(target, account);
  }

  private async feedPost(target: ClaimedTarget, account: AccountToken): Promise<Published> {
    if (target.publishSentAt) {
      const adopted = await this.adoptIfPosted(target, account, target.publishSentAt);
      if (adopted) return adopted;
    }
    const sent = await this.sendOnce(
      target,
      () => this.send(target, account),
      (sentAt) => this.adoptIfPosted(target, account, sentAt),
    );
    if ('adopted' in sent) return sent.adopted;
    return {
      platformPostId: sent.id,
      permalink: await this.tools.graph.pages.permalink(account.token, sent.id),
    };
  }

  private async send(target: ClaimedTarget, { token, platformId }: AccountToken): Promise<string> {
    const { pages } = this.tools.graph;
    const urls = await this.mediaUrls(target);
    if (urls.length === 0) return (await pages.postToFeed(token, platformId, { message: target.caption })).id;
    if (urls.length === 1) {
      const photo = await pages.postPhoto(token, platformId, { url: urls[0] ?? '', caption: target.caption });
      return photo.post_id ?? photo.id;
    }
    return (await pages.postMultiPhoto(token, platformId, { message: target.caption, photoUrls: urls })).id;
  }

  /** A feed video: one call publishes it; its id is recorded as soon as it is known. */
  private async feedVideo(target: ClaimedTarget, account: AccountToken): Promise<Published> {
    if (target.containerId) return this.awaitLive(target, account, target.containerId);
    const { token, platformId } = account;
    const [fileUrl = ''] = await this.mediaUrls(target);
    const sent = await this.sendOnce(
      target,
      async () => {
        const input = {
          fileUrl,
          description: target.caption,
          ...(target.title ? { title: target.title } : {}),
        };
        return (await this.tools.graph.pages.postVideo(token, platformId, input)).id;
      },
      (sentAt) => this.adoptVideo(target, account, sentAt),
    );
    const videoId = 'adopted' in sent ? sent.adopted.platformPostId : sent.id;
    await this.tools.store.recordContainer(target, videoId);
    return this.awaitLive(target, account, videoId);
  }

  /** A Reel or a video Story: uploaded (and recorded) once, published by `finish` once. */
  private async uploadedVideo(
    target: ClaimedTarget,
    account: AccountToken,
    edge: 'video_reels' | 'video_stories',
  ): Promise<Published> {
    const { pages } = this.tools.graph;
    const { token, platformId } = account;
    let videoId = target.containerId;
    if (!videoId) {
      const [fileUrl = ''] = await this.mediaUrls(target);
      videoId = (await pages.uploadVideo(token, platformId, edge, fileUrl)).videoId;
      await this.tools.store.recordContainer(target, videoId);
    }
    const id = videoId;
    // A finish Meta never received (the worker stopped before it) is sent; one it did is not.
    if (!target.publishSentAt || !(await this.finished(token, id))) {
      const finish =
        edge === 'video_reels'
          ? () => pages.finishReel(token, platformId, { videoId: id, description: target.caption })
          : () => pages.finishVideoStory(token, platformId, id);
      await this.sendOnce(
        target,
        async () => {
          await finish();
          return id;
        },
        async () => ((await this.finished(token, id)) ? { platformPostId: id, permalink: null } : null),
      );
    }
    return this.awaitLive(target, account, id);
  }

  /**
   * A photo Story: an unpublished photo (recorded once, like a video's upload), then the Story. A
   * Story whose answer was lost, or sent before the worker stopped, is looked for among the Page's
   * stories by its photo.
   */
  private async photoStory(target: ClaimedTarget, account: AccountToken): Promise<Published> {
    const { pages } = this.tools.graph;
    const { token, platformId } = account;
    let photoId = target.containerId;
    if (!photoId) {
      const [url = ''] = await this.mediaUrls(target);
      photoId = (await pages.postPhoto(token, platformId, { url, published: false })).id;
      await this.tools.store.recordContainer(target, photoId);
    }
    const id = photoId;
    const adopt = () => this.adoptStory(target, account, id);
    if (target.publishSentAt) {
      const adopted = await adopt();
      if (adopted) return adopted;
    }
    const sent = await this.sendOnce(
      target,
      async () => (await pages.photoStory(token, platformId, id)).postId ?? id,
      adopt,
    );
    return 'adopted' in sent ? sent.adopted : { platformPostId: sent.id, permalink: null };
  }

  private async adoptStory(target: ClaimedTarget, account: AccountToken, photoId: string) {
    const stories = await this.tools.graph.pages.recentStories(account.token, account.platformId);
    const match = stories.find((story) => story.media_id === photoId);
    if (!match) return null;
    this.tools.logger.info(
      { post: target.postId, story: match.post_id },
      'adopted a page story whose answer was lost',
    );
    return { platformPostId: match.post_id, permalink: match.url ?? null };
  }

  /** Did Meta take the video's `finish`? Its publishing phase has started then. */
  private async finished(token: string, videoId: string): Promise<boolean> {
    const video = await this.tools.graph.pages.video(token, videoId);
    return (
      video.published === true || (video.status?.publishing_phase?.status ?? 'not_started') !== 'not_started'
    );
  }

  /** The video's post once it is live; StillProcessing while Meta processes it. */
  private async awaitLive(
    target: ClaimedTarget,
    { token }: AccountToken,
    videoId: string,
  ): Promise<Published> {
    const video = await this.tools.graph.pages.video(token, videoId);
    const live = videoOutcome(video, target.media.find(isVideo)?.id ?? 'unknown');
    if (!live) throw new StillProcessing(`video ${videoId}`);
    return live;
  }

  private async adoptIfPosted(target: ClaimedTarget, account: AccountToken, sentAt: Date) {
    const recent = await this.tools.graph.pages.recentPosts(account.token, account.platformId);
    const since = sentAt.getTime() - 60_000;
    const match = recent.find(
      (p) => (p.message ?? '') === target.caption && (!p.created_time || Date.parse(p.created_time) >= since),
    );
    if (!match) return null;
    this.tools.logger.info(
      { post: target.postId, page_post: match.id },
      'adopted a page post whose answer was lost',
    );
    return { platformPostId: match.id, permalink: match.permalink_url ?? null };
  }

  /** A feed video whose answer was lost: the Page's recent video with this description, if any. */
  private async adoptVideo(target: ClaimedTarget, account: AccountToken, sentAt: Date) {
    const recent = await this.tools.graph.pages.recentVideos(account.token, account.platformId);
    const since = sentAt.getTime() - 60_000;
    const match = recent.find(
      (v) =>
        (v.description ?? '') === target.caption && (!v.created_time || Date.parse(v.created_time) >= since),
    );
    if (!match) return null;
    this.tools.logger.info(
      { post: target.postId, video: match.id },
      'adopted a page video whose answer was lost',
    );
    return { platformPostId: match.id, permalink: null };
  }
}

/** Where a Page video stands: live (its post), still processing (null), or refused with Meta's reason. */
function videoOutcome(video: PageVideo, mediaId: string): Published | null {
  const status = video.status;
  if (status?.video_status === 'error' || status?.processing_phase?.status === 'error') {
    const reasons = status.processing_phase?.errors?.map((e) => `${e.message ?? ''} (code ${e.code ?? '?'})`);
    throw new PublishRefused(
      `the network could not process media item 1 (${mediaId}): ${reasons?.join('; ') || 'processing failed'}`,
    );
  }
  const live = video.published === true || status?.publishing_phase?.status === 'complete';
  if (!live) return null;
  return { platformPostId: video.post_id ?? video.id, permalink: absolutePermalink(video.permalink_url) };
}

/** Meta gives a video's permalink as a path on facebook.com at times. */
function absolutePermalink(link: string | undefined): string | null {
  if (!link) return null;
  return link.startsWith('/') ? `https://www.facebook.com${link}` : link;
}
