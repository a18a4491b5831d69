import { type Env, envInt, parseConfig, z } from '@svc/config';
import { type BreakerPolicy, DEFAULT_BREAKER } from './breaker.ts';

/** The Graph API version this client is written against (facts page: v25.0, released 2026-02-18). */
export const DEFAULT_GRAPH_API_VERSION = 'v25.0';

/**
 * The env fragment every service that talks to Meta reuses: spread `graphClientEnv` into the
 * service's own schema, then build a `GraphClientConfig` with `graphClientConfigFromEnv`.
 * Production defaults point at Meta; `pnpm start` points them at the sandbox.
 */
export const graphClientEnv = {
  GRAPH_API_BASE_URL: z.url().default('https://graph.facebook.com'),
  GRAPH_API_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, 'must look like v25.0')
    .default(DEFAULT_GRAPH_API_VERSION),
  FACEBOOK_DIALOG_URL: z.url().default('https://www.facebook.com'),
  GRAPH_API_TIMEOUT_MS: envInt(20_000, { min: 1 }),
  GRAPH_API_MAX_ATTEMPTS: envInt(3, { min: 1, max: 10 }),
  GRAPH_API_RETRY_BASE_MS: envInt(500, { min: 0 }),
  // Meta counts as down after this many 5xx or unanswered calls in a row; calls then pause for
  // the cooldown, doubling while it stays down (see OutageBreaker).
  GRAPH_API_BREAKER_FAILURES: envInt(DEFAULT_BREAKER.failures, { min: 1 }),
  GRAPH_API_BREAKER_COOLDOWN_MS: envInt(DEFAULT_BREAKER.cooldownMs, { min: 1 }),
  GRAPH_API_BREAKER_MAX_COOLDOWN_MS: envInt(DEFAULT_BREAKER.maxCooldownMs, { min: 1 }),
};

export const graphClientEnvSchema = z.object(graphClientEnv);
export type GraphClientEnv = z.infer<typeof graphClientEnvSchema>;

export interface RetryPolicy {
  /** Total tries, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * What `/metrics` learns of Graph calls: each call's endpoint (ids replaced by `{id}`), outcome
 * (`ok` or the error's kind) and duration, and the usage percentages after each answer.
 */
export interface GraphCallObserver {
  called(endpoint: string, outcome: string, seconds: number): void;
  usage(percent: { app: number; business: number }): void;
}

export interface GraphClientConfig {
  baseUrl: string;
  apiVersion: string;
  dialogBaseUrl: string;
  appId: string;
  appSecret: string;
  timeoutMs: number;
  retry: RetryPolicy;
  /** Send `appsecret_proof` with every token call (Meta's recommended hardening). Default true. */
  appSecretProof?: boolean;
  /** Injectable for tests, so backoff never really waits. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1); injectable for deterministic tests. */
  random?: () => number;
  /** When Meta counts as down and for how long calls pause (DEFAULT_BREAKER when absent). */
  breaker?: BreakerPolicy;
  /** Counts calls and usage on the service's `/metrics`. */
  observer?: GraphCallObserver;
}

export function graphClientConfigFromEnv(
  env: GraphClientEnv,
  app: { appId: string; appSecret: string },
): GraphClientConfig {
  return {
    baseUrl: env.GRAPH_API_BASE_URL.replace(/\/$/, ''),
    apiVersion: env.GRAPH_API_VERSION,
    dialogBaseUrl: env.FACEBOOK_DIALOG_URL.replace(/\/$/, ''),
    appId: app.appId,
    appSecret: app.appSecret,
    timeoutMs: env.GRAPH_API_TIMEOUT_MS,
    retry: {
      maxAttempts: env.GRAPH_API_MAX_ATTEMPTS,
      baseDelayMs: env.GRAPH_API_RETRY_BASE_MS,
      maxDelayMs: 10_000,
    },
    breaker: {
      failures: env.GRAPH_API_BREAKER_FAILURES,
      cooldownMs: env.GRAPH_API_BREAKER_COOLDOWN_MS,
      maxCooldownMs: env.GRAPH_API_BREAKER_MAX_COOLDOWN_MS,
    },
  };
}

/** Convenience for scripts and tests: parse only the Graph fragment out of an environment. */
export function parseGraphClientEnv(env: Env = process.env): GraphClientEnv {
  return parseConfig(graphClientEnvSchema, env);
}
