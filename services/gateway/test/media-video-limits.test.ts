import { type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The video size limit at the gateway's door, with no publishing service behind it: an upload
 * whose size is over MEDIA_VIDEO_MAX_BYTES is refused by the gateway itself, before any of its
 * bytes travel on (a multipart form declaring more than the limit, a tus upload announcing more).
 */
const VIDEO_MAX_BYTES = 2 * 1024 * 1024;
let system: System;
let key: string;
let workspace: string;

beforeAll(async () => {
  system = await startSystem({
    services: ['identity', 'gateway'],
    env: { MEDIA_VIDEO_MAX_BYTES: String(VIDEO_MAX_BYTES) },
  });
  key = (await system.createPartner()).key;
  const created = await fetch(`${system.gatewayUrl}/v1/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'video limits' }),
  });
  workspace = ((await created.json()) as { id: string }).id;
});
afterAll(() => system.stop());

describe('the video limit at the door', () => {
  // Guarantee: a form larger than the video limit is a 400 on `file` naming the limit, answered
  // without publishing (none runs here: reaching it would be a 503).
  it('refuses a form over the limit', async () => {
    const form = new FormData();
    form.set('workspace', workspace);
    form.set('file', new Blob([new Uint8Array(VIDEO_MAX_BYTES + 100_000)]), 'big.mp4');
    const res = await fetch(`${system.gatewayUrl}/v1/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; field: string; message: string } };
    expect(error).toMatchObject({ code: 'validation_error', field: 'file' });
    expect(error.message).toContain(`(${VIDEO_MAX_BYTES} bytes)`);
  });

  // Guarantee: a tus upload announcing more than the limit is 413, in the envelope, before any
  // call to publishing.
  it('refuses a resumable upload over the limit', async () => {
    const res = await fetch(`${system.gatewayUrl}/v1/uploads`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'tus-resumable': '1.0.0',
        'upload-length': String(VIDEO_MAX_BYTES + 1),
        'upload-metadata': `workspace ${Buffer.from(workspace).toString('base64')}`,
      },
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('tus-resumable')).toBe('1.0.0');
    expect(((await res.json()) as { error: { field: string } }).error).toMatchObject({
      field: 'Upload-Length',
    });
  });
});
