import { z } from 'zod';
import { tracingVariables } from './tracing.ts';

export type { TracingConfig } from './tracing.ts';

/** What every service's connection to NATS is made of (the credentials are read by @svc/bus). */
export interface BusConfig {
  NATS_URL: string;
  NATS_PREFIX: string;
  NATS_STREAM_REPLICAS: number;
}

/**
 * Configuration is read once at start from the environment, validated with zod, and a bad or
 * missing variable stops the process with one line naming it.
 *
 * `APP_ENV` is explicit: `development` enables built-in secrets and loopback webhooks and is what
 * `pnpm start` and the tests set; anything else (and the default) is production, where a missing
 * secret is fatal.
 */
export type AppEnv = 'development' | 'production';

export type Env = Record<string, string | undefined>;

export function appEnv(env: Env = process.env): AppEnv {
  return env.APP_ENV === 'development' ? 'development' : 'production';
}

/** A boolean read as true/false/1/0/yes/no. Never `z.coerce.boolean`, which reads "false" as true. */
export function envBoolean(defaultValue: boolean) {
  return z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(defaultValue ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');
}

/** A whole number, optionally bounded. */
export function envInt(defaultValue: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  return z.coerce.number().int().min(min).max(max).default(defaultValue);
}

/** A secret with a built-in value in development only; production must set it. */
export function envSecret(mode: AppEnv, developmentValue: string) {
  const secret = z.string().min(16, 'must be at least 16 characters');
  return mode === 'development' ? secret.default(developmentValue) : secret;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `env` with `schema`; throws a ConfigError whose message names every bad variable. */
export function parseConfig<S extends z.ZodType>(schema: S, env: Env = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    const value = issue.code === 'invalid_type' && issue.input === undefined ? 'is not set' : issue.message;
    return `${name} ${value}`;
  });
  throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
}

/** Like parseConfig, but for a service's start: prints the one-line reason and exits 1. */
export function loadConfig<S extends z.ZodType>(schema: S, env: Env = process.env): z.infer<S> {
  try {
    return parseConfig(schema, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

/** Variables every service reads. Services extend this with their own. */
export function baseConfigSchema(mode: AppEnv) {
  return z.object({
    APP_ENV: z.enum(['development', 'production']).default(mode),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DATABASE_URL: z.url().default('postgresql://postgres@127.0.0.1:5432/social'),
    // One NATS server, or a cluster's nodes comma-separated (nats://a:4222,nats://b:4222): clients
    // fail over to another node when theirs is lost.
    NATS_URL: z.string().default('nats://127.0.0.1:4222'),
    // Who the service is to NATS (@svc/bus natsCredentials): in production a user of its own from
    // a Secret, limited to its subjects (deploy/k8s/nats); none in development. One of: a `.creds`
    // file, a user with its password, or a token.
    NATS_CREDS_FILE: z.string().min(1).optional(),
    NATS_USER: z.string().min(1).optional(),
    NATS_PASSWORD: z.string().min(1).optional(),
    NATS_TOKEN: z.string().min(1).optional(),
    REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
    // Prefix of every JetStream stream and consumer name, so tests and a dev instance never collide.
    NATS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_]*$/)
      .default(''),
    // Copies of each JetStream stream: 3 on a 3-node cluster (a node may be lost), 1 on one server.
    NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
    // Where the ops port (/healthz, /readyz, /metrics) listens: loopback for `pnpm start`; the
    // container image sets 0.0.0.0 so probes and Prometheus reach it from outside the pod.
    OPS_HOST: z.string().default('127.0.0.1'),
    ...tracingVariables,
  });
}

export { z };
