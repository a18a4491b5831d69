import { appEnv, baseConfigSchema, envInt, envSecret, loadConfig, z } from '@svc/config';
import { envKeyring } from '@svc/crypto';
import { envOrigins, envTrustProxy } from './http/client-address.ts';

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
    // Browser origins allowed to call /mcp (comma-separated, each as a browser sends it, e.g.
    // https://app.example.com); a request with any other Origin is refused (DNS rebinding).
    MCP_ALLOWED_ORIGINS: envOrigins(),
    // Failed authentications (unknown, revoked or expired credentials) per client address and
    // minute; past it, uncached credentials from that address are answered 429 without a lookup.
    AUTH_FAILURES_PER_MINUTE: envInt(30, { min: 1 }),
    BODY_LIMIT_BYTES: envInt(1_048_576, { min: 1024 }),
    // Media uploads (multipart, POST /v1/media only): same default as publishing's MEDIA_MAX_BYTES.
    MEDIA_MAX_BYTES: envInt(8 * 1024 * 1024, { min: 1024 }),
    // Videos: the largest file an upload (multipart or resumable) may be; publishing's default too.
    // A file passes through in 1 MiB parts, never held whole.
    MEDIA_VIDEO_MAX_BYTES: envInt(300 * 1024 * 1024, { min: 1024, max: 2 ** 31 - 1 }),
    // Uploads passing through this process at once (a form's file, a resumable upload's PATCH),
    // per partner and in all (429 beyond): same names and defaults as publishing's bound on the
    // files it reads.
    MEDIA_UPLOADS_PER_PARTNER: envInt(4, { min: 1 }),
    MEDIA_UPLOADS_TOTAL: envInt(16, { min: 1 }),
    // Memory for small media files read whole at their signed URLs, shared by the fetches of one
    // URL at the same moment (files up to a 16th of it; larger ones stream), and as much again for
    // such files kept after their read; 0 streams every file.
    MEDIA_WHOLE_READ_BYTES: envInt(32 * 1024 * 1024, { min: 0 }),
    // How long a file read whole is kept for the next fetches of its URL (the other networks of a
    // post); a deleted media's are dropped at once on its announcement. 0 keeps nothing.
    MEDIA_FILE_KEEP_SECONDS: envInt(10, { min: 0, max: 300 }),
    // How long a request may take to arrive, whole (a slow sender holds a connection no longer).
    REQUEST_TIMEOUT_MS: envInt(30_000, { min: 1000 }),
    // The same for an upload (a form with a file, a resumable upload's PATCH): 300 MB at 4 Mbit/s.
    UPLOAD_TIMEOUT_MS: envInt(600_000, { min: 1000 }),
    // Comment lines on the widget's event stream, so proxies keep it open and dead clients show.
    EMBED_HEARTBEAT_MS: envInt(15_000, { min: 100 }),
    // Open widget event streams (across replicas) per embed session and per partner; beyond, 429.
    EMBED_STREAMS_PER_SESSION: envInt(3, { min: 1 }),
    EMBED_STREAMS_PER_PARTNER: envInt(1000, { min: 1 }),
    // A stream whose reader falls this far behind is dropped (the widget reconnects and reloads).
    EMBED_STREAM_BUFFER_BYTES: envInt(64 * 1024, { min: 1024 }),
    // How often an open stream re-checks its session (ended, expired, workspace deleted).
    EMBED_SESSION_RECHECK_MS: envInt(30_000, { min: 100 }),
    // Which proxies in front of the gateway may name the client in X-Forwarded-For (per-IP limits
    // use it): a hop count or their IPs/CIDRs; see http/client-address.ts.
    TRUST_PROXY: envTrustProxy(),
    // Seals the answers kept for Idempotency-Key replays (a minted workspace key among them).
    ENCRYPTION_KEYS: envKeyring(mode),
  });
}

export type GatewayConfig = z.infer<ReturnType<typeof gatewayConfigSchema>>;

export const loadGatewayConfig = (env = process.env): GatewayConfig =>
  loadConfig(gatewayConfigSchema(env), env);
