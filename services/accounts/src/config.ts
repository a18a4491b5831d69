import { appEnv, baseConfigSchema, envInt, envSecret, loadConfig, z } from '@svc/config';
import { envKeyring } from '@svc/crypto';
import { graphClientEnv } from '@svc/graph-client';

export function accountsConfigSchema(env = process.env) {
  const mode = appEnv(env);
  return baseConfigSchema(mode).extend({
    ACCOUNTS_GRPC_ADDRESS: z.string().default('127.0.0.1:50052'),
    IDENTITY_GRPC_URL: z.string().default('127.0.0.1:50051'),
    OPS_PORT: envInt(9102, { max: 65535 }),
    // Where browsers reach the gateway: connect-link URLs and the OAuth redirect URI start here.
    PUBLIC_BASE_URL: z.url().default('http://127.0.0.1:8080'),
    CONNECT_LINK_TTL_SECONDS: envInt(86_400, { min: 60 }),
    OAUTH_STATE_TTL_SECONDS: envInt(900, { min: 30 }),
    // Signs the OAuth state so a forged one is refused before any lookup.
    OAUTH_STATE_SECRET: envSecret(mode, 'development-oauth-state-secret'),
    ENCRYPTION_KEYS: envKeyring(mode),
    // `name:secret,...`: the services allowed to read tokens from the vault (publishing, inbox).
    TOKEN_VAULT_CLIENTS: envSecret(
      mode,
      'publishing:development-vault-publishing,inbox:development-vault-inbox',
    ),
    META_APP_ID: z.string().regex(/^\d+$/).default('465000000000001'),
    META_APP_SECRET: envSecret(mode, 'sandbox-app-secret-0123456789abcdef'),
    EXPIRY_SWEEP_MS: envInt(60_000, { min: 100 }),
    ...graphClientEnv,
  });
}

export type AccountsConfig = z.infer<ReturnType<typeof accountsConfigSchema>>;

export const loadAccountsConfig = (env = process.env): AccountsConfig =>
  loadConfig(accountsConfigSchema(env), env);
