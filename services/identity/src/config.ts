import { appEnv, baseConfigSchema, envInt, loadConfig, z } from '@svc/config';

export function identityConfigSchema(env = process.env) {
  return baseConfigSchema(appEnv(env)).extend({
    IDENTITY_GRPC_ADDRESS: z.string().default('127.0.0.1:50051'),
    OPS_PORT: envInt(9101, { max: 65535 }),
    REDIS_PREFIX: z.string().default(''),
    REQUEST_LOG_RETENTION_DAYS: envInt(7, { min: 1 }),
    LAST_USED_FLUSH_MS: envInt(5_000, { min: 100 }),
  });
}

export type IdentityConfig = z.infer<ReturnType<typeof identityConfigSchema>>;

export const loadIdentityConfig = (env = process.env): IdentityConfig =>
  loadConfig(identityConfigSchema(env), env);
