import { api, connectThroughLink, createUser } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Publishing split into its API and its workers (PUBLISHING_ROLE), as two processes of one stack:
 * the API never works jobs itself, a job waits durably until a worker is there, and `wait=true`
 * on the API sees the outcome a worker settled.
 */
let stack: Stack;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  stack = await startStack({ PUBLISHING_ROLE: 'api' });
  call = api(stack.gateway.url, (await stack.createPartner()).key);
});
afterAll(() => stack.stop());

async function workspaceWithPage() {
  const workspace = (await call('POST', '/v1/workspaces', { name: 'Roles' })).body.id as string;
  const user = await createUser(stack, [{ name: 'Roles Cafe', instagram: { username: 'roles' } }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink(stack, link.url, 'page_network', { userId: user.user.id, decision: 'approve' });
  const accounts = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data as {
    id: string;
    network: string;
  }[];
  const page = accounts.find((a) => a.network === 'page_network');
  if (!page) throw new Error('page not connected');
  return { workspace, page };
}

describe('PUBLISHING_ROLE', () => {
  // Guarantee: an `api` process answers but publishes nothing; the job waits until a `worker`
  // process starts, which serves no gRPC and publishes it; wait=true then sees a worker's outcome.
  it('runs the API and the workers as separate processes', async () => {
    const { workspace, page } = await workspaceWithPage();
    const queued = await call('POST', '/v1/posts', { workspace, caption: 'queued', targets: [page.id] });
    expect(queued.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await call('GET', `/v1/posts/${queued.body.id}`)).body.status).toBe('publishing');

    const worker = await stack.startPublishingWorker();
    expect(worker.port).toBe(0);
    const deadline = Date.now() + 15_000;
    let status = 'publishing';
    while (status === 'publishing' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await call('GET', `/v1/posts/${queued.body.id}`)).body.status;
    }
    expect(status).toBe('published');

    const waited = await call('POST', '/v1/posts?wait=true', {
      workspace,
      caption: 'waited',
      targets: [page.id],
    });
    expect(waited.body.status).toBe('published');
  });
});
