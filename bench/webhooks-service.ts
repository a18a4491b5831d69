// The product under test of bench:webhooks: the real webhooks service (event store consumer,
// delivery worker, gRPC), alone in its own process, on the database and NATS prefix the runner
// prepared. Prints the ready line with its gRPC address.
import { parseConfig } from '../packages/config/src/index.ts';
import { createLogger } from '../packages/logging/src/index.ts';
import { webhooksConfigSchema } from '../services/webhooks/src/config.ts';
import { startWebhooks } from '../services/webhooks/src/service.ts';
import { announce, envVar, onShutdown, requireEnv } from './child.ts';

const env = {
  APP_ENV: 'development',
  LOG_LEVEL: 'warn',
  DATABASE_URL: requireEnv('DATABASE_URL'),
  NATS_PREFIX: requireEnv('NATS_PREFIX'),
  NATS_URL: envVar('NATS_URL', 'nats://127.0.0.1:4222'),
  WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:0',
  OPS_PORT: '0',
};
const service = await startWebhooks(
  parseConfig(webhooksConfigSchema(env), env),
  createLogger('webhooks', { level: env.LOG_LEVEL, destination: process.stderr }),
);
onShutdown(() => service.stop());
announce({ url: `127.0.0.1:${service.port}`, path: '', processes: 'webhooks service: one process' });
