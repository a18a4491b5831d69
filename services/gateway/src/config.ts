import { appEnv, baseConfigSchema, envBoolean, envInt, envSecret, loadConfig, z } from '@svc/config';
import { envKeyring } from '@svc/crypto';

export function gatewayConfigSchema(env = process.env) {
  const mode = appEnv(env);
  return baseConfigSchema(mode).extend({
    PORT: envInt(8080, { min: 0, max: 65535 }),
    HOST: z.string().default('127.0.0.1'),
    // The ops port: /healthz, /readyz and /metrics (probes and Prometheus), apart from PORT.
    OPS_PORT: envInt(9100, { max: 65535 }),
    IDENTITY_GRPC_URL: z.string().default('127.0.0.1:50051'),
    ACCOUNTS_GRPC_URL: z.string().default('127.0.0.1:50052'),
    PUBLISHING_GRPC_URL: z.string().default('127.0.0.1:50053'),
    WEBHOOKS_GRPC_URL: z.string().default('127.0.0.1:50054'),
    INBOX_GRPC_URL: z.string().default('127.0.0.1:50055'),
    // Meta's webhook signatures (X-Hub-Signature-256) are keyed with the app secret; the verify
    // token answers the subscription handshake. Development defaults match the graph-sandbox.
    META_APP_SECRET: envSecret(mode, 'sandbox-app-secret-0123456789abcdef'),
    META_VERIFY_TOKEN: envSecret(mode, 'sandbox-verify-token'),
    REDIS_PREFIX: z.string().default(''),
    RATE_LIMIT_WINDOW_MS: envInt(60_000, { min: 100 }),
    UNAUTHENTICATED_LIMIT_PER_MINUTE: envInt(60, { min: 1 }),
    BODY_LIMIT_BYTES: envInt(1_048_576, { min: 1024 }),
    // Media uploads (multipart, POST /v1/media only): same default as publishing's MEDIA_MAX_BYTES.
    MEDIA_MAX_BYTES: envInt(8 * 1024 * 1024, { min: 1024 }),
    REQUEST_TIMEOUT_MS: envInt(30_000, { min: 1000 }),
    // Comment lines on the widget's event stream, so proxies keep it open and dead clients show.
    EMBED_HEARTBEAT_MS: envInt(15_000, { min: 100 }),
    // Set when a proxy in front of the gateway sets X-Forwarded-For (per-IP limits use it).
    TRUST_PROXY: envBoolean(false),
    // Seals the answers kept for Idempotency-Key replays (a minted workspace key among them).
    ENCRYPTION_KEYS: envKeyring(mode),
  });
}

export type GatewayConfig = z.infer<ReturnType<typeof gatewayConfigSchema>>;

export const loadGatewayConfig = (env = process.env): GatewayConfig =>
  loadConfig(gatewayConfigSchema(env), env);
