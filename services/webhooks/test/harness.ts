import { Writable } from 'node:stream';
import { type Bus, connectBus, type EventEnvelope, makeEvent } from '@svc/bus';
import { parseConfig } from '@svc/config';
import { createClient, type ServiceClient, WebhooksService } from '@svc/contracts';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { createTestDatabase, uniquePrefix } from '@svc/testing';
import pg from 'pg';
import { webhooksConfigSchema } from '../src/config.ts';
import { startWebhooks, type WebhooksOverrides } from '../src/service.ts';

type WebhooksClient = ServiceClient<typeof WebhooksService>;

/**
 * One test file's webhooks service, in this process, on a fresh database cloned from the migrated
 * template and its own NATS prefix, reached over real gRPC. Events are published to JetStream
 * exactly as the outbox relays do (subject = type, Nats-Msg-Id = event id).
 */
export interface WebhooksStack {
  databaseUrl: string;
  prefix: string;
  env: Record<string, string>;
  logs: Record<string, unknown>[];
  service: Awaited<ReturnType<typeof startWebhooks>>;
  client: WebhooksClient;
  db: pg.Pool;
  bus: Bus;
  /** Publishes an event for the partner; returns the envelope and the exact text sent. */
  publish(
    partnerSlug: string,
    type?: string,
    options?: {
      workspace?: string | null;
      externalId?: string | null;
      data?: Record<string, unknown>;
      at?: Date;
    },
  ): Promise<{ event: EventEnvelope; raw: string }>;
  publishRaw(type: string, raw: string, msgId: string): Promise<void>;
  /** A partner with a webhook pointing at `url`; returns its id, slug and signing secret. */
  partnerWithWebhook(url: string): Promise<{ id: string; slug: string; secret: string }>;
  /** Another replica of the service on the same database and NATS prefix. */
  startReplica(): Promise<Awaited<ReturnType<typeof startWebhooks>>>;
  stop(): Promise<void>;
}

export async function startWebhooksStack(
  env: Record<string, string> = {},
  overrides: WebhooksOverrides = {},
): Promise<WebhooksStack> {
  const databaseUrl = await createTestDatabase();
  const prefix = uniquePrefix('w');
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  const fullEnv = {
    APP_ENV: 'development',
    DATABASE_URL: databaseUrl,
    NATS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:0',
    OPS_PORT: '0',
    WEBHOOK_POLL_MS: '50',
    ...env,
  };
  const logger = createLogger('webhooks', { destination, level: fullEnv.LOG_LEVEL });
  const config = parseConfig(webhooksConfigSchema(fullEnv), fullEnv);
  const service = await startWebhooks(config, logger, overrides);
  const replicas: Awaited<ReturnType<typeof startWebhooks>>[] = [];
  const client = createClient(WebhooksService, `127.0.0.1:${service.port}`, { defaultDeadlineMs: 30_000 });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 3, options: '-c search_path=webhooks' });
  const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'webhooks-test', logger });

  const publishRaw = async (type: string, raw: string, msgId: string) => {
    await bus.js.publish(bus.subjects.subject(type), raw, { msgID: msgId });
  };
  return {
    databaseUrl,
    prefix,
    env: fullEnv,
    logs,
    service,
    client,
    db,
    bus,
    publishRaw,
    async publish(partnerSlug, type = 'post.published', options = {}) {
      const event = makeEvent(
        type,
        {
          partner: partnerSlug,
          workspace: options.workspace === undefined ? 'ws_test' : options.workspace,
          external_id: options.externalId ?? null,
        },
        options.data ?? { post: { id: 'post_1', status: 'published' } },
        options.at,
      );
      const raw = JSON.stringify(event);
      await publishRaw(type, raw, event.id);
      return { event, raw };
    },
    async partnerWithWebhook(url) {
      const id = newId('partner');
      const slug = uniquePrefix('partner-');
      const { secret } = await client.putWebhook({
        partnerId: id,
        partnerSlug: slug,
        url,
        rotateSecret: false,
      });
      return { id, slug, secret };
    },
    async startReplica() {
      const replica = await startWebhooks(config, logger, overrides);
      replicas.push(replica);
      return replica;
    },
    async stop() {
      client.close();
      for (const replica of replicas) await replica.stop();
      await service.stop();
      for (const key of ['events', 'internal'] as const)
        await bus.jsm.streams.delete(bus.subjects.streamName(key)).catch(() => {});
      await bus.close();
      await db.end();
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
