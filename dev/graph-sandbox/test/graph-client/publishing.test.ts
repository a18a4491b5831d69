import type { GraphApiError } from '@svc/graph-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectUser, failure, type Harness, startHarness } from './harness.ts';

let h: Harness;
let c: Connected;
const img = (name: string) => `${h.internet.url}/img/${name}`;
interface Published {
  data: { type: string; id: string; account_id: string; caption: string | null; media_urls: string[] }[];
}

beforeAll(async () => {
  h = await startHarness({ containerProcessingMs: 60_000, publishQuota: 3 });
  c = await connectUser(h);
});
afterAll(() => h.close());

describe('Instagram publishing against the sandbox', () => {
  // Guarantee: a container stays IN_PROGRESS for the processing time, media_publish before FINISHED is 9007/2207027, then publishing works and yields a permalink.
  it('runs container → status → publish → permalink', async () => {
    const { id } = await h.client.instagram.createImageContainer(c.pageToken, c.igId, {
      imageUrl: img('square.jpg'),
      caption: 'Fresh bread',
    });
    expect((await h.client.instagram.containerStatus(c.pageToken, id)).status_code).toBe('IN_PROGRESS');
    const early = await failure<GraphApiError>(() => h.client.instagram.publish(c.pageToken, c.igId, id));
    expect(early.details).toMatchObject({ code: 9007, subcode: 2207027 });
    await h.control('POST', '/__sandbox/clock', { advance_seconds: 61 });
    expect((await h.client.instagram.containerStatus(c.pageToken, id)).status_code).toBe('FINISHED');
    const media = await h.client.instagram.publish(c.pageToken, c.igId, id);
    expect((await h.client.instagram.containerStatus(c.pageToken, id)).status_code).toBe('PUBLISHED');
    expect(await h.client.instagram.permalink(c.pageToken, media.id)).toMatch(/\/p\/[A-Za-z0-9]{11}\/$/);
    const recent = await h.client.instagram.recentMedia(c.pageToken, c.igId);
    expect(recent[0]).toMatchObject({ id: media.id, caption: 'Fresh bread' });
    const again = await failure<GraphApiError>(() => h.client.instagram.publish(c.pageToken, c.igId, id));
    expect(again.details).toMatchObject({ code: 24, subcode: 2207008 });
  });

  // Guarantee: a carousel of 2 items publishes as one CAROUSEL_ALBUM; a single child is refused with 100/2207028.
  it('publishes a carousel and refuses too few children', async () => {
    const a = await h.client.instagram.createCarouselItem(c.pageToken, c.igId, {
      imageUrl: img('square.jpg'),
    });
    const b = await h.client.instagram.createCarouselItem(c.pageToken, c.igId, {
      imageUrl: img('portrait.jpg'),
    });
    const tooFew = await failure<GraphApiError>(() =>
      h.client.instagram.createCarousel(c.pageToken, c.igId, { children: [a.id] }),
    );
    expect(tooFew.details).toMatchObject({ code: 100, subcode: 2207028 });
    const parent = await h.client.instagram.createCarousel(c.pageToken, c.igId, {
      children: [a.id, b.id],
      caption: 'Two',
    });
    await h.control('POST', '/__sandbox/clock', { advance_seconds: 61 });
    const media = await h.client.instagram.publish(c.pageToken, c.igId, parent.id);
    expect((await h.client.instagram.media(c.pageToken, media.id)).media_type).toBe('CAROUSEL_ALBUM');
  });

  // Guarantee: the sandbox really fetches media and refuses what Instagram refuses, with Meta's codes, classified as media errors.
  it.each([
    ['unreachable URL', 'http://127.0.0.1:1/nothing.jpg', 9004, 2207052],
    ['not an image', '/page.html', 36001, 2207005],
    ['aspect ratio 9:16', '/img/tall.jpg', 36003, 2207009],
  ])('refuses bad media: %s', async (_name, path, code, subcode) => {
    const url = path.startsWith('/') ? `${h.internet.url}${path}` : path;
    const error = await failure<GraphApiError>(() =>
      h.client.instagram.createImageContainer(c.pageToken, c.igId, { imageUrl: url }),
    );
    expect(error.details).toMatchObject({ code, subcode });
    expect(error.kind).toBe('media');
  });

  // Guarantee: the rolling 24 h quota is enforced with 9/2207042 (kind quota), and content_publishing_limit reports usage and total.
  it('enforces the publishing quota', async () => {
    const limit = await h.client.instagram.publishingLimit(c.pageToken, c.igId);
    expect(limit).toEqual({ quotaUsage: 2, quotaTotal: 3, quotaDurationS: 86400 });
    const publishOne = async () => {
      const { id } = await h.client.instagram.createImageContainer(c.pageToken, c.igId, {
        imageUrl: img('square.jpg'),
      });
      await h.control('POST', '/__sandbox/clock', { advance_seconds: 61 });
      return h.client.instagram.publish(c.pageToken, c.igId, id);
    };
    await publishOne();
    const error = await failure<GraphApiError>(publishOne);
    expect(error.details).toMatchObject({ code: 9, subcode: 2207042 });
    expect(error.kind).toBe('quota');
  });
});

describe('Page publishing against the sandbox', () => {
  // Guarantee: text, link, photo and multi-photo posts reach the network once each, with their captions and media URLs.
  it('posts text, link, photo and multi-photo', async () => {
    const text = await h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'Open today' });
    expect(text.id).toMatch(new RegExp(`^${c.pageId}_\\d+$`));
    const link = await h.client.pages.postToFeed(c.pageToken, c.pageId, {
      message: 'See',
      link: `${h.internet.url}/page.html`,
    });
    const photo = await h.client.pages.postPhoto(c.pageToken, c.pageId, {
      url: img('square.jpg'),
      caption: 'Pic',
    });
    expect(photo.post_id).toMatch(/_/);
    const multi = await h.client.pages.postMultiPhoto(c.pageToken, c.pageId, {
      message: 'Album',
      photoUrls: [img('square.jpg'), img('portrait.jpg')],
    });
    expect(await h.client.pages.permalink(c.pageToken, multi.id)).toContain(`/${c.pageId}/posts/`);
    const recent = await h.client.pages.recentPosts(c.pageToken, c.pageId);
    expect(recent.map((p) => p.id)).toEqual([multi.id, photo.post_id, link.id, text.id]);
    const published = await h.control<Published>('GET', '/__sandbox/published');
    const album = published.body.data.find((p) => p.id === multi.id);
    expect(album?.media_urls).toEqual([img('square.jpg'), img('portrait.jpg')]);
    expect(published.body.data.filter((p) => p.type === 'page_post')).toHaveLength(4);
  });

  // Guarantee: Meta's refusals for Pages come through: duplicate text (506), unreachable link (1609005), a user token where a page token is needed (190/2069032 → invalid), a non-image photo (100/1366046).
  it('surfaces page publishing errors', async () => {
    await h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'Same words' });
    expect(
      (
        await failure<GraphApiError>(() =>
          h.client.pages.postToFeed(c.pageToken, c.pageId, { message: 'Same words' }),
        )
      ).details,
    ).toMatchObject({ code: 506 });
    const link = await failure<GraphApiError>(() =>
      h.client.pages.postToFeed(c.pageToken, c.pageId, { link: 'http://127.0.0.1:1/x' }),
    );
    expect(link.details).toMatchObject({ code: 1609005 });
    const userToken = await failure<GraphApiError>(() =>
      h.client.pages.postToFeed(c.userToken, c.pageId, { message: 'x' }),
    );
    expect(userToken.details).toMatchObject({ code: 190, subcode: 2069032 });
    expect(userToken.tokenProblem).toBe('invalid');
    const photo = await failure<GraphApiError>(() =>
      h.client.pages.postPhoto(c.pageToken, c.pageId, { url: `${h.internet.url}/page.html` }),
    );
    expect(photo.details).toMatchObject({ code: 100, subcode: 1366046 });
    expect(photo.kind).toBe('media');
  });
});
