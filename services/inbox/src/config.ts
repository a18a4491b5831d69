import { appEnv, baseConfigSchema, envInt, envSecret, loadConfig, z } from '@svc/config';
import { graphClientEnv } from '@svc/graph-client';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

export function inboxConfigSchema(env = process.env) {
  const mode = appEnv(env);
  return baseConfigSchema(mode).extend({
    INBOX_GRPC_ADDRESS: z.string().default('127.0.0.1:50055'),
    IDENTITY_GRPC_URL: z.string().default('127.0.0.1:50051'),
    ACCOUNTS_GRPC_URL: z.string().default('127.0.0.1:50052'),
    PUBLISHING_GRPC_URL: z.string().default('127.0.0.1:50053'),
    OPS_PORT: envInt(9105, { max: 65535 }),
    // This service's credential for the accounts token vault (one of its TOKEN_VAULT_CLIENTS).
    TOKEN_VAULT_CREDENTIAL: envSecret(mode, 'development-vault-inbox'),
    META_APP_ID: z.string().regex(/^\d+$/).default('465000000000001'),
    META_APP_SECRET: envSecret(mode, 'sandbox-app-secret-0123456789abcdef'),
    // Provider webhooks handled at once per replica. Their messages are recorded together, by
    // group commit (intake-batches.ts): under load, one commit carries up to this many bodies.
    INBOX_INTAKE_CONCURRENCY: envInt(64, { min: 1, max: 256 }),
    // The reconciliation (reconciliation.ts): how often each active account's recent conversations
    // and comments are read again, how far back, and how fast (Meta allows 2 calls/s per account
    // on these reads; half of it by default leaves the rest to sends and lookups).
    INBOX_RECONCILE_INTERVAL_MS: envInt(10 * MINUTE_MS, { min: 1_000 }),
    INBOX_RECONCILE_LOOKBACK_MS: envInt(48 * HOUR_MS, { min: MINUTE_MS }),
    INBOX_RECONCILE_CALLS_PER_SECOND: z.coerce.number().positive().max(2).default(1),
    // Accounts one replica reconciles at once (each at the rate above).
    INBOX_RECONCILE_CONCURRENCY: envInt(4, { min: 1, max: 64 }),
    // A send whose outcome is unknown (a timeout, a crash) this long is settled by asking the
    // network, at its account's next reconciliation. Keep it above GRAPH_API_TIMEOUT_MS.
    INBOX_SEND_SETTLE_AFTER_MS: envInt(2 * MINUTE_MS, { min: 1_000 }),
    ...graphClientEnv,
  });
}

export type InboxConfig = z.infer<ReturnType<typeof inboxConfigSchema>>;

export const loadInboxConfig = (env = process.env): InboxConfig => loadConfig(inboxConfigSchema(env), env);
