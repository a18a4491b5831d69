import { api, connectThroughLink, createUser, eventually, Receiver } from '@svc/testing';
import { FAST_GRAPH_RETRIES } from '@svc/testing/stack';
import { type System, startSystem } from '@svc/testing/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Tracing across processes: the gateway, publishing and webhooks run as their own processes (each
 * its own SDK and service name) and export OTLP/HTTP JSON to a receiver in this test; identity and
 * accounts run in this process with tracing off. One post created through the gateway must be one
 * trace, its spans linked parent to child across HTTP, gRPC, the outbox, NATS and the consumers.
 */

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
}

const KIND = { server: 2, client: 3, producer: 4, consumer: 5 } as const;

let collector: Receiver;
let system: System;

beforeAll(async () => {
  collector = await Receiver.start('/v1/traces');
  const traced = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
  system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'gateway'],
    run: { gateway: 'source', publishing: 'source', webhooks: 'source' },
    env: { LOG_LEVEL: 'warn', UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000' },
    serviceEnv: {
      accounts: FAST_GRAPH_RETRIES,
      publishing: { ...FAST_GRAPH_RETRIES, ...traced },
      gateway: traced,
      webhooks: traced,
    },
  });
}, 180_000);
afterAll(async () => {
  await system?.stop();
  await collector?.close();
});

/** Every span the services exported so far (OTLP JSON: hex ids, numeric kinds). */
function exportedSpans(): ExportedSpan[] {
  return collector.requests.flatMap((request) => {
    const body = JSON.parse(request.body) as {
      resourceSpans: {
        resource: { attributes: { key: string; value: { stringValue?: string } }[] };
        scopeSpans: { spans: Omit<ExportedSpan, 'service'>[] }[];
      }[];
    };
    return body.resourceSpans.flatMap(({ resource, scopeSpans }) => {
      const service = resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      return scopeSpans.flatMap(({ spans }) => spans.map((span) => ({ ...span, service })));
    });
  });
}

async function connectedAccount(
  call: ReturnType<typeof api>,
): Promise<{ workspace: string; account: string }> {
  const workspace = (await call('POST', '/v1/workspaces', { name: 'Traced' })).body.id as string;
  const user = await createUser(system, [{ name: 'Traced Page' }]);
  const link = (await call('POST', `/v1/workspaces/${workspace}/connect-links`, {})).body;
  await connectThroughLink({ sandbox: { url: system.addresses.sandboxUrl } }, link.url, 'page_network', {
    userId: user.user.id,
    decision: 'approve',
  });
  const account = (await call('GET', `/v1/workspaces/${workspace}/accounts`)).body.data[0].id as string;
  return { workspace, account };
}

describe('tracing', () => {
  // Guarantee: with tracing configured, one partner request is one trace across services: the
  // gateway's request span → its gRPC client span → publishing's gRPC server span → the outbox
  // send of the publish job → the publish worker's job span → the send of the post's event →
  // webhooks' event-store span, each the parent of the next, so the request can be followed.
  it('follows a post from the gateway through publishing and its worker to webhooks', async () => {
    const { key } = await system.createPartner();
    const call = api(system.gatewayUrl, key);
    const { workspace, account } = await connectedAccount(call);
    const created = await call('POST', '/v1/posts', { workspace, caption: 'traced', targets: [account] });
    expect(created.status).toBeLessThan(300);

    // Each process exports in its own batches: checked until the chain from the stored event
    // climbs whole to the request (a broken hop fails with the diff of the last look).
    const ancestry = await eventually(() => {
      const spans = exportedSpans();
      const root = spans.find((s) => s.service === 'gateway' && s.name === 'POST /v1/posts');
      const byId = new Map(spans.filter((s) => s.traceId === root?.traceId).map((s) => [s.spanId, s]));
      const stored = [...byId.values()].find(
        (s) => s.service === 'webhooks' && s.name === 'store post.published',
      );
      const chain: ExportedSpan[] = [];
      for (let span = stored; span; span = byId.get(span.parentSpanId)) chain.unshift(span);
      expect(chain.map((s) => [s.service, s.kind, s.name])).toEqual([
        ['gateway', KIND.server, 'POST /v1/posts'],
        ['gateway', KIND.client, 'svc.publishing.v1.PublishingService/CreatePost'],
        ['publishing', KIND.server, 'svc.publishing.v1.PublishingService/CreatePost'],
        ['publishing', KIND.producer, 'send jobs.publish'],
        ['publishing', KIND.consumer, 'process jobs.publish'],
        ['publishing', KIND.producer, 'send post.published'],
        ['webhooks', KIND.consumer, 'store post.published'],
      ]);
      return chain;
    }, 20_000);
    // The root is the request itself: nothing above it, the whole chain in one trace.
    expect(ancestry[0]?.parentSpanId ?? '').toBe('');
  }, 60_000);
});
