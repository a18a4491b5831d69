import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Connected, type Harness, startHarness } from './harness.ts';
import { processingTime, published, videoBytes, videoUrl, waitFor } from './video-helpers.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false });
  c = await h.connect();
});
afterAll(() => h.close());
beforeEach(() => processingTime(h, null));

type Json = Record<string, unknown>;
type Status = {
  video_status: string;
  processing_phase: { status: string; errors?: Json[] };
  publishing_phase: { status: string };
};

const post = (edge: string, json: Json) =>
  h.graph<Json>('POST', `/${c.pageId}/${edge}`, c.pageToken, { json });

/** A multipart Graph call, as Meta's guides show `source` and `video_file_chunk` uploads. */
async function multipart(
  edge: string,
  fields: Record<string, string>,
  file: { name: string; bytes: Uint8Array },
) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.set(key, value);
  form.set(file.name, new Blob([file.bytes], { type: 'video/mp4' }), 'clip.mp4');
  const url = `${h.sandbox.url}/v25.0/${c.pageId}/${edge}?access_token=${c.pageToken}`;
  const res = await fetch(url, { method: 'POST', body: form });
  return { status: res.status, body: (await res.json()) as Json };
}

async function video(id: string, fields = 'status,post_id,permalink_url,published') {
  return (await h.graph<Json & { status: Status }>('GET', `/${id}`, c.pageToken, { query: { fields } })).body;
}

/** The video once processing has ended, well or not. */
const processed = (id: string) =>
  waitFor(
    () => video(id),
    (v) => v.status.video_status !== 'processing',
  );

async function uploadTo(uploadUrl: string, headers: Record<string, string>, body?: Uint8Array) {
  const res = await fetch(uploadUrl, {
    method: 'POST',
    headers: { authorization: `OAuth ${c.pageToken}`, ...headers },
    body,
  });
  return (await res.json()) as Json;
}

describe('Page feed videos', () => {
  // Guarantee: /videos with file_url answers {id}; the video shows processing for video_processing_ms, then is ready and published, and is logged as page_video with its title and description.
  it('takes a file_url, processes and publishes the video', async () => {
    await processingTime(h, 200);
    const created = await post('videos', {
      file_url: videoUrl(h, 'landscape-hevc.mov'),
      title: 'Oven tour',
      description: 'Our new oven',
    });
    expect(Object.keys(created.body)).toEqual(['id']);
    const id = String(created.body.id);
    const early = await video(id);
    expect(early.status).toMatchObject({
      video_status: 'processing',
      processing_phase: { status: 'in_progress' },
    });
    expect(early.published).toBe(false);
    const done = await processed(id);
    expect(done.status).toMatchObject({ video_status: 'ready', publishing_phase: { status: 'complete' } });
    expect(done).toMatchObject({ published: true, post_id: `${c.pageId}_${id}` });
    expect((await published(h)).find((p) => p.id === id)).toMatchObject({
      type: 'page_video',
      media_product_type: 'FEED',
      media_type: 'VIDEO',
      title: 'Oven tour',
      caption: 'Our new oven',
      media: [{ kind: 'video', url: videoUrl(h, 'landscape-hevc.mov') }],
    });
  });

  // Guarantee: a file that is no video is refused at once with 100/2069019; a multipart `source` upload is accepted.
  it('refuses a non-video and takes a multipart source', async () => {
    const refused = await post('videos', { file_url: videoUrl(h, 'not-video.jpg') });
    expect(refused.body.error).toMatchObject({ code: 100, error_subcode: 2069019 });
    const source = await multipart(
      'videos',
      { description: 'From disk' },
      {
        name: 'source',
        bytes: await videoBytes('story-h264.mp4'),
      },
    );
    expect(source.status).toBe(200);
    expect((await processed(String(source.body.id))).status.video_status).toBe('ready');
  });

  // Guarantee: the resumable phases: start gives a session and offsets (strings), transfer takes chunks at those offsets and refuses a wrong one, finish answers success and the video is then processed.
  it('uploads in start, transfer and finish phases', async () => {
    const bytes = await videoBytes('reel-h264-aac.mp4');
    const start = await post('videos', { upload_phase: 'start', file_size: bytes.length });
    const session = String(start.body.upload_session_id);
    expect(start.body).toMatchObject({ start_offset: '0', end_offset: String(bytes.length) });
    const half = Math.floor(bytes.length / 2);
    const chunk = (offset: number, part: Uint8Array) =>
      multipart(
        'videos',
        { upload_phase: 'transfer', upload_session_id: session, start_offset: String(offset) },
        { name: 'video_file_chunk', bytes: part },
      );
    expect((await chunk(0, bytes.subarray(0, half))).body).toEqual({
      start_offset: String(half),
      end_offset: String(bytes.length),
    });
    expect((await chunk(0, bytes.subarray(half))).body.error).toMatchObject({ code: 100 });
    const last = await chunk(half, bytes.subarray(half));
    expect(last.body).toEqual({ start_offset: String(bytes.length), end_offset: String(bytes.length) });
    const finish = await post('videos', {
      upload_phase: 'finish',
      upload_session_id: session,
      title: 'Phased',
    });
    expect(finish.body).toEqual({ success: true });
    const id = String(start.body.video_id);
    expect((await processed(id)).published).toBe(true);
    expect((await video(id, 'title')).title).toBe('Phased');
  });
});

describe('Page Reels', () => {
  // Guarantee: start → {video_id, upload_url} on the sandbox's video-upload path, the bytes POSTed there, finish with video_state=PUBLISHED → {success:true}; the Reel is processing, then published with a post_id and a /reel/{id} permalink, logged as page_reel.
  it('runs start, upload, finish and publishes the Reel', async () => {
    await processingTime(h, 150);
    const start = await post('video_reels', { upload_phase: 'start' });
    const id = String(start.body.video_id);
    expect(start.body.upload_url).toBe(`${h.sandbox.url}/video-upload/v25.0/${id}`);
    const early = await post('video_reels', {
      upload_phase: 'finish',
      video_id: id,
      video_state: 'PUBLISHED',
    });
    expect(early.body.error).toMatchObject({ code: 100 });
    const bytes = await videoBytes('reel-h264-aac.mp4');
    const uploaded = await uploadTo(
      String(start.body.upload_url),
      { offset: '0', file_size: String(bytes.length) },
      bytes,
    );
    expect(uploaded).toEqual({ success: true });
    const finish = await post('video_reels', {
      upload_phase: 'finish',
      video_id: id,
      video_state: 'PUBLISHED',
      description: 'Crumb shot',
    });
    expect(finish.body).toEqual({ success: true });
    expect((await video(id)).status.publishing_phase.status).toBe('in_progress');
    const done = await processed(id);
    expect(done).toMatchObject({
      published: true,
      post_id: `${c.pageId}_${id}`,
      permalink_url: `${h.sandbox.url}/reel/${id}`,
    });
    expect((await fetch(`${h.sandbox.url}/reel/${id}`)).status).toBe(200);
    expect((await published(h)).find((p) => p.id === id)).toMatchObject({
      type: 'page_reel',
      media_product_type: 'REELS',
      caption: 'Crumb shot',
    });
  });

  // Guarantee: a Reel shorter than 3 s is taken, then processing ends in error (video_status error, processing_phase error with code 6000) and it is never published.
  it('fails processing for a video Reels cannot take', async () => {
    const start = await post('video_reels', { upload_phase: 'start' });
    const id = String(start.body.video_id);
    await uploadTo(String(start.body.upload_url), { file_url: videoUrl(h, 'story-short.mp4') });
    await post('video_reels', { upload_phase: 'finish', video_id: id, video_state: 'PUBLISHED' });
    const done = await processed(id);
    expect(done.status).toMatchObject({ video_status: 'error', processing_phase: { status: 'error' } });
    expect(done.status.processing_phase.errors?.[0]).toMatchObject({ code: 6000 });
    expect(done.published).toBe(false);
    expect((await published(h)).some((p) => p.id === id)).toBe(false);
  });
  // Guarantee: a processing_error fault on the Reel's start call fails that Reel's processing later, even with a good file.
  it('fails processing when a processing fault says so', async () => {
    await h.control('POST', '/__sandbox/faults', {
      method: 'POST',
      path: '/*/video_reels',
      processing_error: 6000,
    });
    const start = await post('video_reels', { upload_phase: 'start' });
    const id = String(start.body.video_id);
    await uploadTo(String(start.body.upload_url), { file_url: videoUrl(h, 'reel-h264-aac.mp4') });
    await post('video_reels', { upload_phase: 'finish', video_id: id, video_state: 'PUBLISHED' });
    const done = await processed(id);
    expect(done.status.processing_phase).toMatchObject({ status: 'error', errors: [{ code: 6000 }] });
    expect(done.published).toBe(false);
  });
});

describe('Page stories', () => {
  // Guarantee: a video story (start, upload by file_url, finish → {success, post_id}) and a photo story of an unpublished photo are logged as page_story and listed by the Page's stories edge; a published photo is refused.
  it('publishes video and photo stories', async () => {
    const start = await post('video_stories', { upload_phase: 'start' });
    const id = String(start.body.video_id);
    await uploadTo(String(start.body.upload_url), { file_url: videoUrl(h, 'story-h264.mp4') });
    const finish = await post('video_stories', { upload_phase: 'finish', video_id: id });
    expect(finish.body).toMatchObject({ success: true, post_id: expect.stringMatching(/^\d+$/) });
    const photo = await post('photos', { url: `${h.internet.url}/img/photo.jpg`, published: false });
    const story = await post('photo_stories', { photo_id: photo.body.id });
    expect(story.body).toMatchObject({ success: true, post_id: expect.stringMatching(/^\d+$/) });
    const stories = (await published(h)).filter((p) => p.type === 'page_story');
    expect(stories.map((p) => [p.id, p.media_product_type, (p.media as Json[])[0]?.kind])).toEqual([
      [finish.body.post_id, 'STORY', 'video'],
      [story.body.post_id, 'STORY', 'image'],
    ]);
    // The Page's stories edge lists both, newest first, with the photo or video each was made of.
    const listed = await h.graph<{ data: Json[] }>('GET', `/${c.pageId}/stories`, c.pageToken);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ post_id: story.body.post_id, media_type: 'photo', media_id: photo.body.id }),
      expect.objectContaining({ post_id: finish.body.post_id, media_type: 'video', media_id: id }),
    ]);
    expect(listed.body.data[0]).toMatchObject({
      status: 'PUBLISHED',
      creation_time: expect.stringMatching(/^\d+$/),
      url: expect.stringContaining('/stories/'),
    });
    const shown = await post('photos', { url: `${h.internet.url}/img/photo.jpg` });
    expect((await post('photo_stories', { photo_id: shown.body.id })).body.error).toMatchObject({
      code: 100,
    });
  });
});
