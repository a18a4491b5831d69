// What bench:publish drives the system with: the gateway over undici, the same Graph calls sent
// directly, a bare image server, and a watch on post events.
import { createServer } from 'node:http';
import { connectBus } from '@svc/bus';
import type { GraphClient } from '@svc/graph-client';
import { Agent, request } from 'undici';
import type { Fixture } from './fixtures.ts';
import { CONCURRENCY, logger, NATS_URL, prefix, sleep } from './settings.ts';

export function gatewayClient(gatewayUrl: string, key: string, connections = CONCURRENCY + 4) {
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  return {
    async call(method: 'GET' | 'POST', route: string, body?: unknown) {
      const started = performance.now();
      const response = await request(`${gatewayUrl}${route}`, {
        method,
        dispatcher: agent,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await response.body.json()) as Record<string, unknown>;
      return { status: response.statusCode, body: json, ms: performance.now() - started };
    },
    close: () => agent.close(),
  };
}

export type GatewayClient = ReturnType<typeof gatewayClient>;

/** The same Graph calls a worker makes for one target, sent directly with the product's client. */
export function directCalls(graph: GraphClient, imageUrl: string) {
  return {
    async instagram(account: Fixture['ig'], caption: string) {
      const { id } = await graph.instagram.createImageContainer(account.token, account.platformId, {
        imageUrl,
        caption,
      });
      const status = await graph.instagram.containerStatus(account.token, id);
      if (status.status_code !== 'FINISHED') throw new Error(`container ${id} is ${status.status_code}`);
      const media = await graph.instagram.publish(account.token, account.platformId, id);
      await graph.instagram.permalink(account.token, media.id);
    },
    async page(account: Fixture['page'], caption: string) {
      const photo = await graph.pages.postPhoto(account.token, account.platformId, {
        url: imageUrl,
        caption,
      });
      await graph.pages.permalink(account.token, photo.post_id ?? photo.id);
    },
  };
}

export type DirectCalls = ReturnType<typeof directCalls>;

export async function serveImage(jpeg: Buffer) {
  const server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length }).end(jpeg),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/photo.jpg`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Settlement {
  at: number;
  status: string;
  published: number;
  targets: number;
}

interface PostEvent {
  data?: { post?: { id: string; status: string; targets: { status: string }[] } };
}

/** `post.*` events on NATS (core subscription), recording when each post settled. */
export async function watchSettlements() {
  const bus = await connectBus({ url: NATS_URL, prefix, name: 'bench-watch', logger });
  const settled = new Map<string, Settlement>();
  const waiters: { ids: string[]; resolve: () => void }[] = [];
  const subscription = bus.nc.subscribe(bus.subjects.subject('post.>'), {
    callback: (error, message) => {
      if (error) return;
      const post = message.json<PostEvent>().data?.post;
      if (!post || settled.has(post.id)) return;
      settled.set(post.id, {
        at: performance.now(),
        status: post.status,
        published: post.targets.filter((t) => t.status === 'published').length,
        targets: post.targets.length,
      });
      for (const waiter of waiters) if (waiter.ids.every((id) => settled.has(id))) waiter.resolve();
    },
  });
  return {
    settled,
    async all(ids: string[], timeoutMs: number) {
      if (!ids.every((id) => settled.has(id)))
        await Promise.race([
          new Promise<void>((resolve) => waiters.push({ ids, resolve })),
          sleep(timeoutMs),
        ]);
      const missing = ids.filter((id) => !settled.has(id)).length;
      if (missing > 0)
        throw new Error(`${missing} of ${ids.length} posts did not settle within ${timeoutMs} ms`);
    },
    async close() {
      subscription.unsubscribe();
      await bus.close();
    },
  };
}

export type SettlementWatch = Awaited<ReturnType<typeof watchSettlements>>;
