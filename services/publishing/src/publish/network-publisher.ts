import type { AccountToken } from '@svc/directory';
import { GraphApiError, type GraphClient } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { pollWithBackoff } from '@svc/net';
import type { MediaFiles } from '../media/media-files.ts';
import type { ClaimedTarget, Published } from '../posts/post-rows.ts';
import type { PostStore } from '../posts/post-store.ts';

/** The network refused the post, or its outcome cannot be known; the target fails with this message. */
export class PublishRefused extends Error {}

/**
 * The network is still processing the target's media (a video): the job gives its slot back and
 * the target is checked again later (see deferral.ts), resuming from what was recorded.
 */
export class StillProcessing extends Error {
  constructor(readonly what: string) {
    super(`the network is still processing ${what}`);
  }
}

/** A video is sent as a URL the network fetches, like an image; only the parameter differs. */
export const isVideo = (media: { mime: string }) => media.mime.startsWith('video/');

/**
 * How long a publish call whose answer was lost may still complete at the network (and be live):
 * asked again for this long, backing off, before the target is failed.
 */
const UNKNOWN_OUTCOME_GRACE = { firstDelayMs: 200, maxDelayMs: 5_000, deadlineMs: 2 * 60_000 };

/** What publishing to a network uses: the Graph client, the post store, the media files, a clock. */
export interface NetworkTools {
  graph: GraphClient;
  store: PostStore;
  files: MediaFiles;
  logger: Logger;
  now: () => Date;
}

/**
 * One network's way of publishing a claimed target. The moment the final call is sent is recorded
 * first; when its answer is lost (timeout, connection cut), the network is asked for a while
 * whether it went through (`adopt`) before anything concludes it did not: failing too early would
 * let a re-publish post it a second time.
 */
export abstract class NetworkPublisher {
  constructor(protected readonly tools: NetworkTools) {}

  abstract publish(target: ClaimedTarget, account: AccountToken): Promise<Published>;

  protected async sendOnce(
    target: ClaimedTarget,
    send: () => Promise<string>,
    adopt: (sentAt: Date) => Promise<Published | null>,
  ): Promise<{ id: string } | { adopted: Published }> {
    const sentAt = this.tools.now();
    await this.tools.store.recordPublishSent(target, sentAt);
    try {
      return { id: await send() };
    } catch (error) {
      if (error instanceof GraphApiError && (error.kind === 'timeout' || error.kind === 'network')) {
        const adopted = await pollWithBackoff(() => adopt(sentAt), UNKNOWN_OUTCOME_GRACE);
        if (adopted) return { adopted };
        // Still unknown: the target fails rather than waits, since sending again could post twice.
        throw new PublishRefused(error.message);
      }
      throw error;
    }
  }

  /** The signed URLs of the target's media, in its order, as this network takes them. */
  protected mediaUrls(target: ClaimedTarget): Promise<string[]> {
    return Promise.all(target.media.map((m) => this.tools.files.publishableUrl(m, target.network)));
  }

  /** The target's media with their signed URLs, in its order. */
  protected async sentMedia(target: ClaimedTarget): Promise<{ url: string; video: boolean; id: string }[]> {
    const urls = await this.mediaUrls(target);
    return target.media.map((m, index) => ({ url: urls[index] ?? '', video: isVideo(m), id: m.id }));
  }
}
