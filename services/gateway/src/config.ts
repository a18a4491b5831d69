import { appEnv, baseConfigSchema, envInt, loadConfig, z } from '@svc/config';

export function gatewayConfigSchema(env = process.env) {
  return baseConfigSchema(appEnv(env)).extend({
    PORT: envInt(8080, { min: 0, max: 65535 }),
    HOST: z.string().default('127.0.0.1'),
    IDENTITY_GRPC_URL: z.string().default('127.0.0.1:50051'),
    REDIS_PREFIX: z.string().default(''),
    RATE_LIMIT_WINDOW_MS: envInt(60_000, { min: 100 }),
    UNAUTHENTICATED_LIMIT_PER_MINUTE: envInt(60, { min: 1 }),
    BODY_LIMIT_BYTES: envInt(1_048_576, { min: 1024 }),
    REQUEST_TIMEOUT_MS: envInt(30_000, { min: 1000 }),
  });
}

export type GatewayConfig = z.infer<ReturnType<typeof gatewayConfigSchema>>;

export const loadGatewayConfig = (env = process.env): GatewayConfig =>
  loadConfig(gatewayConfigSchema(env), env);
