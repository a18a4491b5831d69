import { appEnv, baseConfigSchema, envInt, envSecret, loadConfig, z } from '@svc/config';
import { graphClientEnv } from '@svc/graph-client';

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
    // Provider webhooks handled at once per replica (each in its own transaction).
    INBOX_INTAKE_CONCURRENCY: envInt(16, { min: 1, max: 256 }),
    ...graphClientEnv,
  });
}

export type InboxConfig = z.infer<ReturnType<typeof inboxConfigSchema>>;

export const loadInboxConfig = (env = process.env): InboxConfig => loadConfig(inboxConfigSchema(env), env);
