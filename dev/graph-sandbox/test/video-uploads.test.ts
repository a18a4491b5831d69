import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Connected, type Harness, startHarness } from './harness.ts';
import {
  containerState,
  createMedia,
  processingTime,
  published,
  publishMedia,
  settled,
  videoBytes,
  videoUrl,
} from './video-helpers.ts';

let h: Harness;
let c: Connected;
beforeAll(async () => {
  h = await startHarness({ sendEchoes: false });
  c = await h.connect();
});
afterAll(() => h.close());
beforeEach(() => processingTime(h, null));

type Json = Record<string, unknown>;

/** A POST to an upload URI as Meta's guide shows it: token and offsets in headers, the bytes as the body. */
async function upload(uri: string, headers: Record<string, string>, body?: Uint8Array) {
  const res = await fetch(uri, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Json };
}

const auth = (token: string) => ({ authorization: `OAuth ${token}` });

describe('Instagram resumable upload', () => {
  // Guarantee: upload_type=resumable answers {id, uri} with the sandbox's ig-api-upload URI; the file may come in two POSTs at offsets; processing starts only when the last byte is in; the published Reel's file is the sandbox's hosted copy, byte for byte.
  it('takes the file in two parts, then processes and publishes it', async () => {
    // Long enough that a loaded machine still reads the container before processing ends.
    await processingTime(h, 1_000);
    const created = await createMedia(h, c, { media_type: 'REELS', upload_type: 'resumable', caption: 'Up' });
    const { id, uri } = created.body as { id: string; uri: string };
    expect(uri).toBe(`${h.sandbox.url}/ig-api-upload/v25.0/${id}`);
    const bytes = await videoBytes('reel-h264-aac.mp4');
    const half = Math.floor(bytes.length / 2);
    const size = String(bytes.length);
    const first = await upload(
      uri,
      { ...auth(c.pageToken), offset: '0', file_size: size },
      bytes.subarray(0, half),
    );
    expect(first).toEqual({ status: 200, body: { success: true } });
    // Longer than processing takes: still waiting, because processing starts with the last byte.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await containerState(h, c, id)).status_code).toBe('IN_PROGRESS');
    // curl's --data-binary names the body form-encoded: the upload path must take it as bytes all the same.
    const form = 'application/x-www-form-urlencoded';
    const rest = { ...auth(c.pageToken), offset: String(half), file_size: size, 'content-type': form };
    expect((await upload(uri, rest, bytes.subarray(half))).body).toEqual({ success: true });
    expect((await containerState(h, c, id)).status_code).toBe('IN_PROGRESS');
    expect((await settled(h, c, id)).status_code).toBe('FINISHED');
    const mediaId = (await publishMedia(h, c, id)).body.id;
    const url = (await published(h)).find((p) => p.id === mediaId)?.media_urls as string[];
    const hosted = await fetch(url[0] ?? '');
    expect(Buffer.from(await hosted.arrayBuffer()).equals(bytes)).toBe(true);
  });

  // Guarantee: a wrong offset, a missing file_size, a bad token and an unknown container are refused in rupload's debug_info envelope, and nothing is stored.
  it('refuses bad uploads', async () => {
    const { id, uri } = (await createMedia(h, c, { media_type: 'REELS', upload_type: 'resumable' })).body as {
      id: string;
      uri: string;
    };
    const bytes = await videoBytes('reel-h264-aac.mp4');
    const size = String(bytes.length);
    const refusals = [
      await upload(uri, { ...auth(c.pageToken), offset: '10', file_size: size }, bytes),
      await upload(uri, { ...auth(c.pageToken), offset: '0' }, bytes),
      await upload(uri, { ...auth('EAAnotatoken'), offset: '0', file_size: size }, bytes),
      await upload(
        `${h.sandbox.url}/ig-api-upload/v25.0/1795000`,
        { ...auth(c.pageToken), offset: '0', file_size: size },
        bytes,
      ),
    ];
    expect(refusals.map((r) => [r.status, (r.body.debug_info as Json).type])).toEqual([
      [400, 'ProcessingFailedError'],
      [400, 'ProcessingFailedError'],
      [400, 'AuthorizationError'],
      [400, 'ProcessingFailedError'],
    ]);
    expect((await upload(uri, { ...auth(c.pageToken), offset: '0', file_size: size }, bytes)).status).toBe(
      200,
    );
    expect((await containerState(h, c, id)).status_code).toBe('FINISHED');
  });

  // Guarantee: the file_url header makes Meta fetch the file instead; a non-video ends the container in ERROR 2207026.
  it('fetches a file_url and checks it like any video', async () => {
    const story = (await createMedia(h, c, { media_type: 'STORIES', upload_type: 'resumable' })).body as Json;
    const headers = { ...auth(c.pageToken), file_url: videoUrl(h, 'not-video.jpg') };
    expect((await upload(String(story.uri), headers)).body).toEqual({ success: true });
    expect(await settled(h, c, String(story.id))).toMatchObject({
      status_code: 'ERROR',
      status: 'Error: Media upload has failed with error code 2207026',
    });
  });
});
