// The product under test: identity + gateway in this one process (as services/gateway/test/harness.ts
// runs them), on the database, Redis prefix and NATS prefix the runner prepared. Creates a partner
// with a raised rate limit and one workspace, then prints the ready line (URL, path, partner key).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { AuthCache } from '../packages/auth-cache/src/index.ts';
import { parseConfig } from '../packages/config/src/index.ts';
import { createLogger } from '../packages/logging/src/index.ts';
import { gatewayConfigSchema } from '../services/gateway/src/config.ts';
import { startGateway } from '../services/gateway/src/service.ts';
import { createPartner, setPartnerLimit } from '../services/identity/src/admin/partners.ts';
import { identityConfigSchema } from '../services/identity/src/config.ts';
import { startIdentity } from '../services/identity/src/service.ts';
import { announce, envVar, onShutdown, requireEnv } from './child.ts';

// The highest limit setPartnerLimit accepts; far above what one 12 s run can send.
const PARTNER_LIMIT_PER_MINUTE = 1_000_000;

const common = {
  APP_ENV: 'development',
  LOG_LEVEL: 'warn',
  DATABASE_URL: requireEnv('DATABASE_URL'),
  REDIS_PREFIX: requireEnv('REDIS_PREFIX'),
  NATS_PREFIX: requireEnv('NATS_PREFIX'),
  REDIS_URL: envVar('REDIS_URL', 'redis://127.0.0.1:6379'),
  NATS_URL: envVar('NATS_URL', 'nats://127.0.0.1:4222'),
};
// Logs go to stderr: stdout carries only the ready line.
const log = (service: string) =>
  createLogger(service, { level: common.LOG_LEVEL, destination: process.stderr });

const identityEnv = { ...common, IDENTITY_GRPC_ADDRESS: '127.0.0.1:0', OPS_PORT: '0' };
const identity = await startIdentity(
  parseConfig(identityConfigSchema(identityEnv), identityEnv),
  log('identity'),
);
const gatewayEnv = { ...common, PORT: '0', IDENTITY_GRPC_URL: `127.0.0.1:${identity.port}` };
const gateway = await startGateway(parseConfig(gatewayConfigSchema(gatewayEnv), gatewayEnv), log('gateway'));
onShutdown(async () => {
  await gateway.stop();
  await identity.stop();
});

const slug = `bench-${randomBytes(4).toString('hex')}`;
const { key } = await createPartner(identity.prisma, slug, 'Benchmark partner');
const redis = new Redis(common.REDIS_URL, { maxRetriesPerRequest: 1 });
try {
  await setPartnerLimit(
    identity.prisma,
    new AuthCache(redis, common.REDIS_PREFIX),
    slug,
    PARTNER_LIMIT_PER_MINUTE,
  );
} finally {
  redis.disconnect();
}

const response = await fetch(`${gateway.url}/v1/workspaces`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'bench' }),
});
const created = (await response.json()) as { id?: string };
if (response.status !== 201 || !created.id) {
  throw new Error(`POST /v1/workspaces answered ${response.status}: ${JSON.stringify(created)}`);
}

announce({
  url: gateway.url,
  path: `/v1/workspaces/${created.id}`,
  token: key,
  processes: 'one process (gateway + identity)',
});
