import { appEnv, type Env, envBoolean, envInt, parseConfig, z } from '@svc/config';

/**
 * The sandbox is a dev/test tool, so every variable has a development default; the app id, secret
 * and verify token use the same names the product reads, so `pnpm start` can hand both the same values.
 */
export function sandboxConfigSchema(env: Env = process.env) {
  const mode = appEnv(env);
  return z
    .object({
      GRAPH_SANDBOX_PORT: envInt(8090, { max: 65535 }),
      GRAPH_SANDBOX_HOST: z.string().default('127.0.0.1'),
      SANDBOX_PUBLIC_URL: z.string().default(''),
      META_APP_ID: z.string().regex(/^\d+$/, 'must be digits').default('465000000000001'),
      META_APP_SECRET: z.string().min(16).default('sandbox-app-secret-0123456789abcdef'),
      META_VERIFY_TOKEN: z.string().min(1).default('sandbox-verify-token'),
      META_APP_NAME: z.string().default('Social Publishing (sandbox)'),
      SANDBOX_WEBHOOK_URL: z.string().default(''),
      SANDBOX_DEAUTHORIZE_URL: z.string().default(''),
      SANDBOX_CONTAINER_PROCESSING_MS: envInt(2000),
      SANDBOX_SHORT_TOKEN_TTL_S: envInt(3600, { min: 1 }),
      SANDBOX_LONG_TOKEN_TTL_S: envInt(5_184_000, { min: 1 }),
      SANDBOX_PUBLISH_QUOTA: envInt(100, { min: 1 }),
      SANDBOX_CAROUSEL_MAX: envInt(10, { min: 2 }),
      SANDBOX_FETCH_TIMEOUT_MS: envInt(10_000, { min: 1 }),
      SANDBOX_WEBHOOK_TIMEOUT_MS: envInt(5_000, { min: 1 }),
      SANDBOX_WEBHOOK_RETRIES: envInt(3),
      SANDBOX_WEBHOOK_RETRY_BASE_MS: envInt(1_000),
      SANDBOX_SEND_ECHOES: envBoolean(true),
      LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .transform((e) => ({
      port: e.GRAPH_SANDBOX_PORT,
      host: e.GRAPH_SANDBOX_HOST,
      publicUrl: (e.SANDBOX_PUBLIC_URL || `http://127.0.0.1:${e.GRAPH_SANDBOX_PORT}`).replace(/\/$/, ''),
      // Without an explicit public URL, the one the server really listens on is used (port 0 in tests).
      publicUrlExplicit: e.SANDBOX_PUBLIC_URL !== '',
      appId: e.META_APP_ID,
      appSecret: e.META_APP_SECRET,
      appName: e.META_APP_NAME,
      verifyToken: e.META_VERIFY_TOKEN,
      webhookUrl: e.SANDBOX_WEBHOOK_URL,
      deauthorizeUrl: e.SANDBOX_DEAUTHORIZE_URL,
      containerProcessingMs: e.SANDBOX_CONTAINER_PROCESSING_MS,
      shortTokenTtlS: e.SANDBOX_SHORT_TOKEN_TTL_S,
      longTokenTtlS: e.SANDBOX_LONG_TOKEN_TTL_S,
      publishQuota: e.SANDBOX_PUBLISH_QUOTA,
      carouselMax: e.SANDBOX_CAROUSEL_MAX,
      fetchTimeoutMs: e.SANDBOX_FETCH_TIMEOUT_MS,
      webhookTimeoutMs: e.SANDBOX_WEBHOOK_TIMEOUT_MS,
      webhookRetries: e.SANDBOX_WEBHOOK_RETRIES,
      webhookRetryBaseMs: e.SANDBOX_WEBHOOK_RETRY_BASE_MS,
      sendEchoes: e.SANDBOX_SEND_ECHOES,
      logLevel: e.LOG_LEVEL,
      mode,
    }));
}

export type SandboxConfig = z.infer<ReturnType<typeof sandboxConfigSchema>>;

/** Config for tests and embedding: the env defaults, overridden field by field. */
export function sandboxConfig(overrides: Partial<SandboxConfig> = {}, env: Env = {}): SandboxConfig {
  return { ...parseConfig(sandboxConfigSchema(env), env), ...overrides };
}
