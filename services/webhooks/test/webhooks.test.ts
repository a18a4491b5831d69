import { DEVELOPMENT_KEYRING, parseKeyring } from '@svc/crypto';
import { verifyWebhook } from '@svc/sdk';
import { api, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

let stack: Stack;
let receiver: Receiver;
let partner: ReturnType<typeof api>;
let partnerId: string;
let db: pg.Client;

beforeAll(async () => {
  stack = await startStack();
  receiver = await Receiver.start();
  const created = await stack.createPartner();
  partnerId = created.partnerId;
  partner = api(stack.gateway.url, created.key);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await stack.stop();
  await receiver.close();
});
beforeEach(() => {
  receiver.behaviour = (_request, response) => response.writeHead(200).end();
});

describe('webhook configuration', () => {
  // Guarantee: the secret (whsec_, >= 32 random bytes) is returned on creation only, never read back.
  it('creates the webhook and shows its secret once', async () => {
    const created = await partner('PUT', '/v1/webhook', { url: receiver.url });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      url: receiver.url,
      created: expect.any(String),
      updated: expect.any(String),
      secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{43}$/),
    });
    const read = await partner('GET', '/v1/webhook');
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      url: receiver.url,
      created: created.body.created,
      updated: created.body.updated,
    });

    const moved = await partner('PUT', '/v1/webhook', { url: `${receiver.url}/v2` });
    expect(moved.status).toBe(200);
    expect(moved.body).not.toHaveProperty('secret');
    expect((await partner('GET', '/v1/webhook')).body.url).toBe(`${receiver.url}/v2`);
    expect(JSON.stringify(stack.logs)).not.toContain(created.body.secret);
  });

  // Guarantee: PUT and DELETE racing on one webhook never fail on our side: each PUT answers 200
  // (creating or replacing), each DELETE 204 or 404 (found by the fuzz suite: half the PUTs were 500s).
  it('takes concurrent PUTs and DELETEs without a 500', async () => {
    const { key } = await stack.createPartner();
    const racer = api(stack.gateway.url, key);
    for (let round = 0; round < 20; round++) {
      const [put, removed] = await Promise.all([
        racer('PUT', '/v1/webhook', { url: receiver.url }),
        racer('DELETE', '/v1/webhook'),
      ]);
      expect(put.status).toBe(200);
      expect([204, 404]).toContain(removed.status);
    }
  });

  // Guarantee: the secret is stored sealed (AES-256-GCM from the key ring) and bound to its partner.
  it('stores the secret encrypted, bound to the partner', async () => {
    const { body } = await partner('PUT', '/v1/webhook', { url: receiver.url, rotate_secret: true });
    const { rows } = await db.query('SELECT * FROM webhooks.webhooks WHERE partner_id = $1', [partnerId]);
    expect(JSON.stringify(rows)).not.toContain(body.secret);
    const keyring = parseKeyring(DEVELOPMENT_KEYRING);
    expect(rows[0].secret_sealed).toMatch(/^v1\.dev1\./);
    expect(keyring.decrypt(rows[0].secret_sealed, partnerId)).toBe(body.secret);
    expect(() => keyring.decrypt(rows[0].secret_sealed, 'ptn_someone_else')).toThrow();
  });

  // Guarantee: rotation issues a new secret that signs the very next delivery; the old one no longer verifies.
  it('signs deliveries with the rotated secret', async () => {
    const before = await partner('PUT', '/v1/webhook', { url: receiver.url, rotate_secret: true });
    const after = await partner('PUT', '/v1/webhook', { url: receiver.url, rotate_secret: true });
    expect(after.body.secret).toMatch(/^whsec_/);
    expect(after.body.secret).not.toBe(before.body.secret);
    const test = await partner('POST', '/v1/webhook/test');
    expect(test.status).toBe(200);
    const [request] = receiver.deliveriesOf(test.body.event_id);
    const rawBody = request?.body ?? '';
    const headers = request?.headers ?? {};
    expect(verifyWebhook({ secret: after.body.secret, headers, rawBody }).type).toBe('ping');
    expect(() => verifyWebhook({ secret: before.body.secret, headers, rawBody })).toThrow(/does not match/);
  });

  // Guarantee: POST /v1/webhook/test answers with what happened on that attempt, success or not.
  it('answers the test call with the attempt', async () => {
    await partner('PUT', '/v1/webhook', { url: receiver.url });
    const ok = await partner('POST', '/v1/webhook/test');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      id: expect.stringMatching(/^dlv_/),
      event_id: expect.stringMatching(/^evt_/),
      number: 1,
      url: receiver.url,
      attempted_at: expect.any(String),
      status_code: 200,
      error: null,
      latency_ms: expect.any(Number),
      succeeded: true,
    });
    receiver.behaviour = (_request, response) => response.writeHead(503).end();
    const failed = await partner('POST', '/v1/webhook/test');
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ succeeded: false, status_code: 503, error: 'HTTP 503' });
  });

  // Guarantee: bad configuration is refused with validation_error naming the field, never a 5xx.
  it.each([
    [{}, 'url'],
    [{ url: 5 }, 'url'],
    [{ url: '' }, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'ftp://example.com/x' }, 'url'],
    [{ url: 'http://example.com/hook' }, 'url'],
    [{ url: 'https://user:pw@example.com/hook' }, 'url'],
    [{ url: `https://example.com/${'a'.repeat(2100)}` }, 'url'],
    [{ url: 'https://example.com/hook', rotate_secret: 'yes' }, 'rotate_secret'],
    [{ url: 'https://example.com/hook', events: ['x'] }, 'events'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await partner('PUT', '/v1/webhook', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field });
  });

  // Guarantee: one webhook per partner: another partner sees none, and gets 409 on test.
  it('keeps each partner to its own webhook', async () => {
    const other = api(stack.gateway.url, (await stack.createPartner()).key);
    const read = await other('GET', '/v1/webhook');
    expect(read.status).toBe(404);
    expect(read.body.error.code).toBe('not_found');
    const test = await other('POST', '/v1/webhook/test');
    expect(test.status).toBe(409);
    expect(test.body.error.code).toBe('conflict');
  });

  // Guarantee: DELETE removes it (204, empty body); afterwards reads are 404 and test is 409.
  it('deletes the webhook', async () => {
    await partner('PUT', '/v1/webhook', { url: receiver.url });
    const deleted = await partner('DELETE', '/v1/webhook');
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await partner('GET', '/v1/webhook')).status).toBe(404);
    expect((await partner('DELETE', '/v1/webhook')).body.error.code).toBe('not_found');
    const test = await partner('POST', '/v1/webhook/test');
    expect(test.status).toBe(409);
    expect(test.body.error.code).toBe('conflict');
  });
});
