import { newId } from '@svc/ids';
import { api, connectThroughLink, createUser, eventually, newLink, Receiver } from '@svc/testing';
import { type Stack, startStack } from '@svc/testing/stack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.stop());

const scrape = async (opsPort: number) => {
  const response = await fetch(`http://127.0.0.1:${opsPort}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
};

describe('metrics', () => {
  // Guarantee: the gateway counts requests by route template and status on its ops port, so
  // Prometheus sees throughput and errors per route, and raw ids never become label values
  // (bounded cardinality: one series per route, however many posts are asked for).
  it('counts gateway requests by route template and status, with latency', async () => {
    const { key } = await stack.createPartner();
    const call = api(stack.gateway.url, key);
    const ids = [newId('post'), newId('post')];
    for (const id of ids) expect((await call('GET', `/v1/posts/${id}`)).status).toBe(404);
    expect((await call('GET', '/v1/no-such-route')).status).toBe(404);

    const text = await scrape(stack.gateway.opsPort);
    expect(text).toMatch(
      /http_requests_total\{[^}]*method="GET",route="\/v1\/posts\/:id",status="404"[^}]*\} 2/,
    );
    expect(text).toMatch(/http_requests_total\{[^}]*route="unmatched",status="404"/);
    expect(text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/v1\/posts\/:id"[^}]*\} 2/);
    for (const id of ids) expect(text).not.toContain(id);
    expect(text).not.toContain('no-such-route');
  });

  // Guarantee: every gRPC server counts calls by method and status code (the shared addService
  // helper), so a service answering errors shows up per method, not only in logs.
  it('counts gRPC calls by method and code on the serving service', async () => {
    const { key } = await stack.createPartner();
    // A well-formed id reaches publishing (a malformed one is refused by the gateway itself).
    expect((await api(stack.gateway.url, key)('GET', `/v1/posts/${newId('post')}`)).status).toBe(404);

    const identity = await scrape(stack.identity.opsPort);
    expect(identity).toMatch(
      /grpc_server_handled_total\{[^}]*method="svc\.identity\.v1\.IdentityService\/\w+",code="OK"/,
    );
    const publishing = await scrape(stack.publishing.opsPort);
    expect(publishing).toMatch(
      /grpc_server_handled_total\{[^}]*method="svc\.publishing\.v1\.PublishingService\/GetPost",code="NOT_FOUND"/,
    );
    expect(publishing).toMatch(
      /grpc_server_handling_seconds_count\{[^}]*method="svc\.publishing\.v1\.PublishingService\/GetPost"/,
    );
  });

  // Guarantee: publishing counts each target's outcome by network, and webhooks each delivery
  // attempt by outcome, so a network that starts refusing posts or a partner endpoint that
  // stops answering shows on /metrics, not only in the posts' and events' states.
  it('counts publish outcomes by network and delivery attempts by outcome', async () => {
    const receiver = await Receiver.start();
    try {
      const { key } = await stack.createPartner();
      const call = api(stack.gateway.url, key);
      expect((await call('PUT', '/v1/webhook', { url: receiver.url })).status).toBe(200);
      const user = await createUser(stack, [{ name: 'Metrics Bakery' }]);
      const link = await newLink(call);
      await connectThroughLink(stack, link.url, 'page_network', {
        userId: user.user.id,
        decision: 'approve',
      });
      const accounts = (await call('GET', `/v1/workspaces/${link.workspaceId}/accounts`)).body.data;
      const post = await call('POST', '/v1/posts', {
        workspace: link.workspaceId,
        caption: 'counted',
        targets: [accounts[0].id],
      });
      expect(post.status).toBe(201);
      await eventually(async () =>
        (await call('GET', `/v1/posts/${post.body.id}`)).body.status === 'published' ? true : undefined,
      );

      const publishing = await scrape(stack.publishing.opsPort);
      expect(publishing).toMatch(
        /publishing_publish_outcomes_total\{[^}]*network="page_network",outcome="published"[^}]*\} 1/,
      );
      // post.published (among others) reaches the receiver: at least one attempt delivered.
      await eventually(() => (receiver.requests.length > 0 ? true : undefined));
      const webhooks = await eventually(async () => {
        const text = await scrape(stack.webhooks.opsPort);
        return /webhooks_delivery_attempts_total\{[^}]*outcome="delivered"/.test(text) ? text : undefined;
      });
      expect(webhooks).not.toMatch(/webhooks_delivery_attempts_total\{[^}]*state=/);
    } finally {
      await receiver.close();
    }
  });
});
