import { type Bus, connectBus, makeEvent } from '@svc/bus';
import { createClient, type ServiceClient, WebhooksService } from '@svc/contracts';
import type { EventEnvelope } from '@svc/contracts/public';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { uniquePrefix } from '@svc/testing';
import { type InProcess, startSystem } from '@svc/testing/system';
import pg from 'pg';
import type { WebhooksOverrides } from '../src/service.ts';

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
  service: InProcess['webhooks'];
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
  /** Another replica of the service on the same database and NATS prefix (`env` over the stack's). */
  startReplica(env?: Record<string, string>): Promise<InProcess['webhooks']>;
  stop(): Promise<void>;
}

export async function startWebhooksStack(
  env: Record<string, string> = {},
  overrides: WebhooksOverrides = {},
): Promise<WebhooksStack> {
  const system = await startSystem({
    services: ['webhooks'],
    prefix: uniquePrefix('w'),
    env: { WEBHOOK_POLL_MS: '50', ...env },
    startOptions: { webhooks: overrides },
  });
  const { databaseUrl, prefix, logs } = system;
  const service = system.service('webhooks');
  const fullEnv = system.instances[0]?.env ?? {};
  const client = createClient(WebhooksService, `127.0.0.1:${service.port}`, { defaultDeadlineMs: 30_000 });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 3, options: '-c search_path=webhooks' });
  const logger = createLogger('webhooks-test', { level: 'silent' });
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
    publish: (partnerSlug, type = 'post.published', options = {}) =>
      publishEvent(publishRaw, partnerSlug, type, options),
    partnerWithWebhook: (url) => partnerWithWebhook(client, url),
    async startReplica(replicaEnv = {}) {
      return (await system.start('webhooks', { env: replicaEnv })).service as InProcess['webhooks'];
    },
    async stop() {
      client.close();
      await bus.close();
      await db.end();
      await system.stop();
    },
  };
}

type PublishOptions = NonNullable<Parameters<WebhooksStack['publish']>[2]>;

async function publishEvent(
  publishRaw: WebhooksStack['publishRaw'],
  partnerSlug: string,
  type: string,
  options: PublishOptions,
) {
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
}

async function partnerWithWebhook(client: WebhooksClient, url: string) {
  const id = newId('partner');
  const slug = uniquePrefix('partner-');
  const { secret } = await client.putWebhook({ partnerId: id, partnerSlug: slug, url, rotateSecret: false });
  return { id, slug, secret };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
