import { readFile } from 'node:fs/promises';
import { type VideoFixture, videoFixture } from '../../testing/src/video-fixtures.ts';
import type { Connected, Harness } from './harness.ts';

/** Helpers the video tests share: fixture URLs and bytes, container calls, status polling. */
type Json = Record<string, unknown>;

export const videoUrl = (h: Harness, name: VideoFixture) => `${h.internet.url}/video/${name}`;
export const videoBytes = (name: VideoFixture) => readFile(videoFixture(name));

/** Sets `video_processing_ms` for the containers and videos created next. */
export async function processingTime(h: Harness, ms: number | null): Promise<void> {
  const answer = await h.control('POST', '/__sandbox/config', { video_processing_ms: ms });
  if (answer.status !== 200) throw new Error(`config refused: ${JSON.stringify(answer.body)}`);
}

export function createMedia(h: Harness, c: Connected, json: Json) {
  return h.graph<Json & { id: string }>('POST', `/${c.igId}/media`, c.pageToken, { json });
}

export function publishMedia(h: Harness, c: Connected, creationId: string) {
  return h.graph<Json & { id: string }>('POST', `/${c.igId}/media_publish`, c.pageToken, {
    json: { creation_id: creationId },
  });
}

export async function containerState(h: Harness, c: Connected, id: string) {
  const answer = await h.graph<{ status_code: string; status: string }>('GET', `/${id}`, c.pageToken, {
    query: { fields: 'status_code,status' },
  });
  return answer.body;
}

/** Polls a node until `done` holds for it (processing runs on real time), failing after ~3 s. */
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 150; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('still not done after 3 s');
}

/** The container's state once processing has ended (anything but IN_PROGRESS). */
export const settled = (h: Harness, c: Connected, id: string) =>
  waitFor(
    () => containerState(h, c, id),
    (state) => state.status_code !== 'IN_PROGRESS',
  );

export async function published(h: Harness) {
  const answer = await h.control<{ data: Json[] }>('GET', '/__sandbox/published');
  return answer.body.data;
}
