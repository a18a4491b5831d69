import pg from 'pg';
import { expect } from 'vitest';
import { connectThroughLink, createUser, newLink } from '../src/connect.ts';
import { api } from '../src/http.ts';
import { PrivatePostgres } from '../src/private-postgres.ts';
import { PrivateRedis } from '../src/private-servers.ts';
import { Receiver } from '../src/receiver.ts';
import { type ServiceName, type System, startSystem } from '../src/system.ts';
import type { World } from './burst.ts';
import { Gateways } from './gateways.ts';

/** The system a fault file runs, on servers of its own, and what its bursts need. */
export interface FaultSystem {
  system: System;
  world: World;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  receiver: Receiver;
  /** The partner's API through the gateway replicas (for calls besides the bursts). */
  call: ReturnType<typeof api>;
  stop(): Promise<void>;
}

export interface FaultSystemOptions {
  /** A NATS server, or a cluster's nodes comma-separated, of the file's own. */
  natsUrl: string;
  /** Variables for every service, laid over the suite's. */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
}

/**
 * Every service in a process of its own (from its bundle), with two replicas of each one that
 * works in the background and of the gateway, on a Postgres and a Redis of the file's own; a
 * partner whose webhook points at a local receiver, and a workspace with one Page connected.
 */
export async function startFaultSystem(options: FaultSystemOptions): Promise<FaultSystem> {
  const parts: Partial<FaultSystem> = {};
  // Each kept as soon as it runs, so that stop() stops it even if another failed to start.
  const stop = async () => {
    await parts.world?.db.end();
    await parts.system?.stop();
    await Promise.all([parts.postgres?.stop(), parts.redis?.stop(), parts.receiver?.close()]);
  };
  try {
    await Promise.all([
      PrivatePostgres.start({ migrations: 'files' }).then((s) => (parts.postgres = s)),
      PrivateRedis.start().then((s) => (parts.redis = s)),
      Receiver.start().then((s) => (parts.receiver = s)),
    ]);
    const { postgres, redis, receiver } = parts as Required<typeof parts>;
    const system = await startReplicated(options, postgres, redis);
    parts.system = system;
    const partner = await system.createPartner(undefined, { limitPerMinute: 1_000_000 });
    const call = api(system.gatewayUrl, partner.key);
    expect((await call('PUT', '/v1/webhook', { url: receiver.url })).status).toBe(200);
    const gatewayUrls = system.instances.filter((i) => i.name === 'gateway').map((i) => i.address);
    const world = await connectedWorld(system, call, new Gateways(gatewayUrls, partner.key), postgres);
    world.delivered = () => new Set(receiver.requests.map((r) => String(r.headers['x-service-delivery'])));
    parts.world = world;
    return { system, world, postgres, redis, receiver, call, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startReplicated(options: FaultSystemOptions, postgres: PrivatePostgres, redis: PrivateRedis) {
  const system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'],
    run: 'bundle',
    databaseUrl: postgres.databaseUrl,
    env: {
      NATS_URL: options.natsUrl,
      REDIS_URL: redis.url,
      LOG_LEVEL: 'warn',
      UNAUTHENTICATED_LIMIT_PER_MINUTE: '100000',
      ...options.env,
    },
    ...(options.serviceEnv ? { serviceEnv: options.serviceEnv } : {}),
    // Meta sends a webhook the gateway did not take (a 503 while NATS elects a leader) again
    // later; so does the sandbox here (0.5, 2, 8 s), as every fault must be survived with it.
    sandbox: { env: { SANDBOX_WEBHOOK_RETRIES: '3', SANDBOX_WEBHOOK_RETRY_BASE_MS: '500' } },
  });
  try {
    for (const name of ['accounts', 'webhooks', 'inbox', 'gateway'] as const)
      await system.start(name, { label: `${name}-2` });
    await system.start('publishing', { label: 'publishing-worker-2', env: { PUBLISHING_ROLE: 'worker' } });
  } catch (error) {
    await system.stop();
    throw error;
  }
  return system;
}

/** A workspace with one Page connected through a connect link, as the bursts use it. */
async function connectedWorld(
  system: System,
  call: ReturnType<typeof api>,
  gateways: Gateways,
  postgres: PrivatePostgres,
): Promise<World> {
  const user = await createUser(system, [{ name: 'Fault Bakery' }]);
  const link = await newLink(call);
  const sandbox = { sandbox: { url: system.addresses.sandboxUrl } };
  const answer = { userId: user.user.id, decision: 'approve' as const };
  const connected = await connectThroughLink(sandbox, link.url, 'page_network', answer);
  const accounts = (await call('GET', `/v1/workspaces/${link.workspaceId}/accounts`)).body.data;
  const warnings = system.logs.filter((l) => Number(l.level) >= 40).slice(-5);
  const why = `${connected.status} ${connected.location} ${connected.body.slice(0, 300)} ${JSON.stringify(warnings)}`;
  expect(accounts, why).toHaveLength(1);
  const db = new pg.Pool({ connectionString: postgres.databaseUrl, max: 2 });
  db.on('error', () => {}); // the Postgres restart cuts this pool's connections too
  return {
    gateways,
    sandboxControl: system.sandboxControl,
    workspace: link.workspaceId,
    accounts: accounts.map((a: { id: string }) => a.id),
    pageIds: accounts.map((a: { platform_id: string }) => a.platform_id),
    db,
    delivered: () => new Set(),
  };
}
