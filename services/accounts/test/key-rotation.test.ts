import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { DEVELOPMENT_KEYRING, hmacSha256Hex } from '@svc/crypto';
import { api, connectThroughLink, createUser, eventually, newLink, Receiver } from '@svc/testing';
import { type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The README's rotation of ENCRYPTION_KEYS on a running system: put a new key first (old one
 * after it) and restart the services that seal, run `pnpm rotate-keys` until it reports nothing
 * left, then drop the old key and restart again.
 */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const NEW_KEY = `k2:${Buffer.alloc(32, 9).toString('base64')}`;
const BOTH = `${NEW_KEY},${DEVELOPMENT_KEYRING}`;

let system: System;
let receiver: Receiver;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  receiver = await Receiver.start();
  system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'gateway'],
    env: { UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' },
  });
  call = api(system.gatewayUrl, (await system.createPartner()).key);
});
afterAll(async () => {
  await system?.stop();
  await receiver?.close();
});

/** Restarts the services that seal (accounts, webhooks) where they listened, with this key ring. */
async function restartWithKeys(keys: string): Promise<void> {
  for (const [name, variable] of [
    ['accounts', 'ACCOUNTS_GRPC_ADDRESS'],
    ['webhooks', 'WEBHOOKS_GRPC_ADDRESS'],
  ] as const) {
    const running = system.instances.find((i) => i.name === name);
    if (!running) throw new Error(`${name} is not running`);
    await system.stopInstance(running);
    await system.start(name, { env: { [variable]: running.address, ENCRYPTION_KEYS: keys } });
  }
}

/** `pnpm rotate-keys` (its script) against this system's database. */
function rotateKeys(keys: string) {
  const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
  const run = spawnSync(tsx, [path.join(ROOT, 'scripts/rotate-keys.ts')], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, APP_ENV: 'development', DATABASE_URL: system.databaseUrl, ENCRYPTION_KEYS: keys },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

async function connectPage(name: string) {
  const user = await createUser(system, [{ name }]);
  const { url, workspaceId } = await newLink(call);
  const sandbox = { url: system.addresses.sandboxUrl };
  await connectThroughLink({ sandbox }, url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await call('GET', `/v1/workspaces/${workspaceId}/accounts`)).body.data;
  return { workspace: workspaceId, page: accounts[0] as { id: string; status: string } };
}

// Guarantee: one command re-seals everything sealed with the keyring in every service (network
// tokens in accounts, webhook secrets in webhooks), reports what is left, and once the old key is
// dropped, accounts still connect, posts still publish with tokens sealed before, and webhooks
// are still delivered signed with the secret the partner was given before.
it('connects, publishes and delivers webhooks after the old key is dropped', async () => {
  const { secret } = (await call('PUT', '/v1/webhook', { url: receiver.url })).body;
  const before = await connectPage('Sealed with the old key');

  await restartWithKeys(BOTH);
  const rotated = rotateKeys(BOTH);
  expect(rotated.output).toContain('webhooks: 1 webhook secrets re-sealed, 0 left');
  expect(rotated.output).toMatch(/accounts: [1-9]\d* network tokens re-sealed, 0 left/);
  expect(rotated.status, rotated.output).toBe(0);
  expect(rotateKeys(BOTH).output).toContain('everything is sealed with key "k2"');

  await restartWithKeys(NEW_KEY);
  const post = await eventually(async () => {
    const answer = await call('POST', '/v1/posts?wait=true', {
      workspace: before.workspace,
      caption: 'After the rotation',
      targets: [before.page.id],
    });
    return answer.status === 201 ? answer.body : undefined;
  });
  expect(post.status).toBe('published');
  const delivery = await eventually(() =>
    receiver.requests.find(
      (r) => r.body.includes(post.id) && r.headers['x-service-event'] === 'post.published',
    ),
  );
  const signed = `${delivery.headers['x-service-timestamp']}.${delivery.body}`;
  expect(delivery.headers['x-service-signature']).toBe(`sha256=${hmacSha256Hex(secret, signed)}`);
  const after = await connectPage('Sealed with the new key');
  expect(after.page.status).toBe('active');
});
