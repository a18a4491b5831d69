import type { AccountToken } from '@svc/directory';
import type { ClaimedTarget, Published } from '../posts/post-rows.ts';
import { NetworkPublisher } from './network-publisher.ts';

/**
 * Pages: text → /feed, one image → /photos, several → unpublished photos then one /feed post
 * with attached_media. After an unknown outcome the Page's recent posts tell whether it went through.
 */
export class PagePublisher extends NetworkPublisher {
  async publish(target: ClaimedTarget, account: AccountToken): Promise<Published> {
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
}
