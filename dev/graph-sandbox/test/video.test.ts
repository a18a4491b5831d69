import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { VideoFixture } from '../../testing/src/video-fixtures.ts';
import { type Connected, type Harness, startHarness } from './harness.ts';
import {
  containerState,
  createMedia,
  processingTime,
  published,
  publishMedia,
  settled,
  videoUrl,
} from './video-helpers.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false, publishQuota: 50 });
  c = await h.connect();
});
afterAll(() => h.close());
beforeEach(async () => {
  await processingTime(h, null);
  await h.control('DELETE', '/__sandbox/faults');
});

type Json = Record<string, unknown>;
const image = () => `${h.internet.url}/img/photo.jpg`;
const reel = (extra: Json = {}) =>
  createMedia(h, c, { media_type: 'REELS', video_url: videoUrl(h, 'reel-h264-aac.mp4'), ...extra });
const FORMAT_ERROR = 'Error: Media upload has failed with error code 2207026';

async function media(id: string, fields: string) {
  return (await h.graph<Json>('GET', `/${id}`, c.pageToken, { query: { fields } })).body;
}

async function quotaUsage(): Promise<number> {
  const answer = await h.graph<{ data: { quota_usage: number }[] }>(
    'GET',
    `/${c.igId}/content_publishing_limit`,
    c.pageToken,
  );
  return answer.body.data[0]?.quota_usage ?? -1;
}

describe('Instagram Reels', () => {
  // Guarantee: a Reel container is IN_PROGRESS for video_processing_ms, media_publish before FINISHED is 9007/2207027, then it publishes once as REELS/VIDEO with a /reel/ permalink, counts toward the quota, and the published log keeps its settings.
  it('processes, refuses an early publish, then publishes once as a Reel', async () => {
    await processingTime(h, 300);
    const usage = await quotaUsage();
    const created = await reel({
      caption: 'Proofing dough',
      share_to_feed: false,
      thumb_offset: 1500,
      collaborators: '["mia","jo"]',
      location_id: '110843418940484',
      audio_name: 'Bakery beats',
    });
    expect(created.status).toBe(200);
    const { id } = created.body;
    expect(await containerState(h, c, id)).toEqual({
      status_code: 'IN_PROGRESS',
      status: 'In Progress: Media is still being processed.',
      id,
    });
    const early = await publishMedia(h, c, id);
    expect(early.body.error).toMatchObject({ code: 9007, error_subcode: 2207027 });
    expect((await settled(h, c, id)).status_code).toBe('FINISHED');
    const done = await publishMedia(h, c, id);
    expect(done.status).toBe(200);
    const read = await media(done.body.id, 'permalink,media_product_type,media_type,shortcode,caption');
    expect(read).toMatchObject({
      media_product_type: 'REELS',
      media_type: 'VIDEO',
      caption: 'Proofing dough',
    });
    expect(read.permalink).toBe(`${h.sandbox.url}/reel/${read.shortcode}/`);
    expect((await fetch(String(read.permalink))).status).toBe(200);
    expect((await publishMedia(h, c, id)).body.error).toMatchObject({ code: 24, error_subcode: 2207008 });
    expect(await quotaUsage()).toBe(usage + 1);
    const entry = (await published(h)).find((p) => p.id === done.body.id);
    expect(entry).toMatchObject({
      type: 'instagram_media',
      media_product_type: 'REELS',
      media_type: 'VIDEO',
      media: [{ kind: 'video', url: videoUrl(h, 'reel-h264-aac.mp4') }],
      children: null,
      share_to_feed: false,
      thumb_offset: 1500,
      collaborators: ['mia', 'jo'],
      location_id: '110843418940484',
      audio_name: 'Bakery beats',
    });
  });

  // Guarantee: with no processing time set (the tests' default of 0), a video container is FINISHED at once; a MOV/HEVC file is accepted (facts §2.6).
  it('accepts MOV with HEVC and is ready at once without a processing time', async () => {
    const created = await createMedia(h, c, {
      media_type: 'REELS',
      video_url: videoUrl(h, 'landscape-hevc.mov'),
      collaborators: 'a,b,c',
    });
    expect((await containerState(h, c, created.body.id)).status_code).toBe('FINISHED');
  });

  // Guarantee: each rule of facts §2.6 broken ends the container in ERROR with 2207026 in its status, without failing the create call; publishing it is -1/2207053 (a new container is needed).
  it.each<[string, VideoFixture, string]>([
    ['shorter than 3 s', 'story-short.mp4', 'REELS'],
    ['15 fps', 'low-fps.mp4', 'REELS'],
    ['MPEG-4 part 2', 'mpeg4-part2.mp4', 'REELS'],
    ['moov at the end', 'moov-at-end.mp4', 'REELS'],
    ['an edit list', 'edit-list.mp4', 'REELS'],
    ['a JPEG given as video', 'not-video.jpg', 'REELS'],
    ['a fragmented MP4', 'fragmented.mp4', 'REELS'],
    ['a story shorter than 3 s', 'story-short.mp4', 'STORIES'],
  ])('ends in ERROR 2207026 for %s', async (_name, fixture, mediaType) => {
    await processingTime(h, 100);
    const created = await createMedia(h, c, { media_type: mediaType, video_url: videoUrl(h, fixture) });
    expect(created.status).toBe(200);
    expect((await containerState(h, c, created.body.id)).status_code).toBe('IN_PROGRESS');
    expect(await settled(h, c, created.body.id)).toEqual({
      status_code: 'ERROR',
      status: FORMAT_ERROR,
      id: created.body.id,
    });
    const publish = await publishMedia(h, c, created.body.id);
    expect(publish.body.error).toMatchObject({ code: -1, error_subcode: 2207053, is_transient: false });
  });

  // Guarantee: a video that cannot be fetched fails the create call itself with 9004/2207052, as for images.
  it('refuses an unreachable video_url at once', async () => {
    const created = await createMedia(h, c, { media_type: 'REELS', video_url: 'http://127.0.0.1:1/x.mp4' });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 9004, error_subcode: 2207052 });
  });

  // Guarantee: Reel parameters are checked as Meta checks them: thumb_offset not a number → 1/2207057, past the video's end → ERROR 2207057, more than 3 collaborators → (#100), VIDEO outside a carousel → 100/2207089.
  it('refuses bad Reel parameters', async () => {
    expect((await reel({ thumb_offset: 'soon' })).body.error).toMatchObject({
      code: 1,
      error_subcode: 2207057,
    });
    const late = await reel({ thumb_offset: 60_000 });
    expect(await settled(h, c, late.body.id)).toMatchObject({
      status_code: 'ERROR',
      status: 'Error: Media upload has failed with error code 2207057',
    });
    expect((await reel({ collaborators: ['a', 'b', 'c', 'd'] })).body.error).toMatchObject({ code: 100 });
    const video = await createMedia(h, c, {
      media_type: 'VIDEO',
      video_url: videoUrl(h, 'reel-h264-aac.mp4'),
    });
    expect(video.body.error).toMatchObject({ code: 100, error_subcode: 2207089 });
    const unknown = await createMedia(h, c, { media_type: 'GIF', image_url: image() });
    expect(unknown.body.error).toMatchObject({ code: 100, error_subcode: 2207023 });
  });

  // Guarantee: a comment on a Reel is reported by the comment webhook with media_product_type REELS.
  it('names REELS in the comment webhook of a Reel', async () => {
    const created = await reel();
    const mediaId = (await publishMedia(h, c, created.body.id)).body.id;
    await h.control('POST', `/__sandbox/instagram/media/${mediaId}/comments`, { text: 'Yum' });
    const value = h.lastWebhook().entry[0]?.changes?.[0]?.value;
    expect(value?.media).toEqual({ id: mediaId, media_product_type: 'REELS' });
  });
});

describe('processing faults', () => {
  // Guarantee: a processing_error fault lets the create call succeed and ends that one container in ERROR with the chosen code; the next container is unaffected.
  it.each([2207026, 2207076, 2207077, 2207082])('fails processing with %i', async (code) => {
    const fault = await h.control('POST', '/__sandbox/faults', {
      method: 'POST',
      path: '/*/media',
      processing_error: code,
    });
    expect(fault.status).toBe(201);
    const failing = await reel();
    expect(failing.status).toBe(200);
    expect(await settled(h, c, failing.body.id)).toMatchObject({
      status_code: 'ERROR',
      status: `Error: Media upload has failed with error code ${code}`,
    });
    expect((await settled(h, c, (await reel()).body.id)).status_code).toBe('FINISHED');
  });

  // Guarantee: a fault cannot both answer with an error and fail processing, and the code must be one Meta uses.
  it('refuses a contradictory or unknown processing fault', async () => {
    const both = { path: '/*/media', processing_error: 2207026, error: { code: 1, message: 'x' } };
    expect((await h.control('POST', '/__sandbox/faults', both)).status).toBe(400);
    const unknown = { path: '/*/media', processing_error: 123 };
    expect((await h.control('POST', '/__sandbox/faults', unknown)).status).toBe(400);
  });
});

describe('Instagram stories', () => {
  // Guarantee: an image story (9:16, which feed posts refuse) and a video story publish as STORY with Instagram's /stories/{username}/{id}/ permalink and no caption; /stories lists them and /media does not.
  it('publishes image and video stories', async () => {
    const tall = `${h.internet.url}/img/tall.jpg`;
    const feedPost = await createMedia(h, c, { image_url: tall });
    expect(feedPost.body.error).toMatchObject({ code: 36003, error_subcode: 2207009 });
    const photo = await createMedia(h, c, { media_type: 'STORIES', image_url: tall, caption: 'ignored' });
    const clip = await createMedia(h, c, { media_type: 'STORIES', video_url: videoUrl(h, 'story-h264.mp4') });
    const ids: string[] = [];
    for (const created of [photo, clip]) ids.push((await publishMedia(h, c, created.body.id)).body.id);
    const [photoId = '', clipId = ''] = ids;
    const read = await media(clipId, 'media_type,media_product_type,permalink,caption');
    expect(read).toEqual({
      media_type: 'VIDEO',
      media_product_type: 'STORY',
      permalink: `${h.sandbox.url}/stories/janebakery/${clipId}/`,
      id: clipId,
    });
    expect((await media(photoId, 'media_type,caption')).caption).toBeUndefined();
    const stories = await h.graph<{ data: { id: string }[] }>('GET', `/${c.igId}/stories`, c.pageToken);
    expect(stories.body.data.map((s) => s.id)).toEqual([clipId, photoId]);
    const feed = await h.graph<{ data: { id: string }[] }>('GET', `/${c.igId}/media`, c.pageToken);
    expect(feed.body.data.map((m) => m.id)).not.toContain(clipId);
    const log = (await published(h)).filter((p) => p.id === photoId || p.id === clipId);
    expect(log.map((p) => [p.media_product_type, p.caption, (p.media as Json[])[0]?.kind])).toEqual([
      ['STORY', null, 'image'],
      ['STORY', null, 'video'],
    ]);
  });
});

describe('carousels with videos', () => {
  // Guarantee: a carousel mixes image and video children; the parent is IN_PROGRESS while its video child processes, publishes as CAROUSEL_ALBUM with IMAGE and VIDEO children, and the log lists each child's kind; a Reel is refused as a child (2207028).
  it('mixes images and videos, and refuses a Reel child', async () => {
    await processingTime(h, 200);
    const photo = await createMedia(h, c, { image_url: image(), is_carousel_item: true });
    const clip = await createMedia(h, c, {
      media_type: 'VIDEO',
      is_carousel_item: true,
      video_url: videoUrl(h, 'reel-h264-aac.mp4'),
    });
    const reelChild = await reel();
    const refused = await createMedia(h, c, {
      media_type: 'CAROUSEL',
      children: [photo.body.id, reelChild.body.id],
    });
    expect(refused.body.error).toMatchObject({ code: 100, error_subcode: 2207028 });
    const parent = await createMedia(h, c, {
      media_type: 'CAROUSEL',
      children: `${photo.body.id},${clip.body.id}`,
      caption: 'Two ways',
    });
    expect((await containerState(h, c, parent.body.id)).status_code).toBe('IN_PROGRESS');
    expect((await settled(h, c, parent.body.id)).status_code).toBe('FINISHED');
    const mediaId = (await publishMedia(h, c, parent.body.id)).body.id;
    const read = await media(mediaId, 'media_type,media_product_type,children{media_type}');
    expect(read.media_type).toBe('CAROUSEL_ALBUM');
    expect(read.media_product_type).toBe('FEED');
    expect((read.children as { data: Json[] }).data.map((child) => child.media_type)).toEqual([
      'IMAGE',
      'VIDEO',
    ]);
    const entry = (await published(h)).find((p) => p.id === mediaId);
    expect(entry?.children).toEqual([
      { kind: 'image', url: image() },
      { kind: 'video', url: videoUrl(h, 'reel-h264-aac.mp4') },
    ]);
  });

  // Guarantee: a carousel whose video child fails processing ends in ERROR with the child's code.
  it('fails with its failing child', async () => {
    const photo = await createMedia(h, c, { image_url: image(), is_carousel_item: true });
    const clip = await createMedia(h, c, {
      media_type: 'VIDEO',
      is_carousel_item: true,
      video_url: videoUrl(h, 'low-fps.mp4'),
    });
    const parent = await createMedia(h, c, {
      media_type: 'CAROUSEL',
      children: [photo.body.id, clip.body.id],
    });
    expect(await settled(h, c, parent.body.id)).toMatchObject({ status_code: 'ERROR', status: FORMAT_ERROR });
  });
});
