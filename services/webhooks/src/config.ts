import { appEnv, baseConfigSchema, envBoolean, envInt, loadConfig, z } from '@svc/config';
import { envKeyring } from '@svc/crypto';

export function webhooksConfigSchema(env = process.env) {
  const mode = appEnv(env);
  return baseConfigSchema(mode).extend({
    WEBHOOKS_GRPC_ADDRESS: z.string().default('127.0.0.1:50054'),
    OPS_PORT: envInt(9104, { max: 65535 }),
    // What this process runs: the gRPC API, the event store consumer with the delivery worker, or
    // both (default). Split, deliveries scale on their own; the API still sends test pings itself.
    WEBHOOKS_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
    // The key ring that seals webhook secrets (the same one as account tokens).
    ENCRYPTION_KEYS: envKeyring(mode),
    // One hard deadline per delivery attempt: connect, headers and reading the response.
    WEBHOOK_TIMEOUT_MS: envInt(10_000, { min: 100, max: 60_000 }),
    // Events are kept for the retry horizon plus this catch-up window for GET /v1/events.
    EVENT_RETENTION_DAYS: envInt(30, { min: 1 }),
    // Lets deliveries reach loopback and private addresses (and http:// to loopback). Development only:
    // production refuses them so a webhook URL cannot probe the internal network.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: envBoolean(mode === 'development'),
    // Attempts in flight per replica, in all and per partner endpoint; retries may use at most
    // WEBHOOK_RETRY_SHARE_PERCENT of the slots, so they never starve first attempts.
    WEBHOOK_CONCURRENCY: envInt(128, { min: 2, max: 10_000 }),
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: envInt(16, { min: 1, max: 1_000 }),
    WEBHOOK_RETRY_SHARE_PERCENT: envInt(50, { min: 1, max: 100 }),
    // How often the worker looks for due attempts when nothing wakes it earlier.
    WEBHOOK_POLL_MS: envInt(250, { min: 10, max: 60_000 }),
    // How long a crashed store's unacknowledged events wait before NATS redelivers them: the
    // bound on recovering from a killed replica (storing a batch takes milliseconds, and storing
    // an event twice stores it once).
    EVENT_STORE_ACK_WAIT_MS: envInt(10_000, { min: 1_000 }),
  });
}

export type WebhooksConfig = z.infer<ReturnType<typeof webhooksConfigSchema>>;

export const loadWebhooksConfig = (env = process.env): WebhooksConfig =>
  loadConfig(webhooksConfigSchema(env), env);
