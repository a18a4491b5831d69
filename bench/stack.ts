// The product under test of bench:gateway: identity + gateway in this one process, started by
// @svc/testing as the tests start them, on the database, Redis prefix and NATS prefix the runner
// prepared. Creates a partner with a raised rate limit and one workspace, then prints the ready
// line (URL, path, partner key).
import { startSystem } from '@svc/testing/system';
import { announce, envVar, onShutdown, requireEnv } from './child.ts';

// The highest limit an operator can set; far above what one 12 s run can send.
const PARTNER_LIMIT_PER_MINUTE = 1_000_000;

const system = await startSystem({
  services: ['identity', 'gateway'],
  databaseUrl: requireEnv('DATABASE_URL'),
  prefix: requireEnv('NATS_PREFIX'),
  env: {
    LOG_LEVEL: 'warn',
    REDIS_URL: envVar('REDIS_URL', 'redis://127.0.0.1:6379'),
    NATS_URL: envVar('NATS_URL', 'nats://127.0.0.1:4222'),
  },
  // Logs go to stderr: stdout carries only the ready line.
  logs: 'stderr',
});
onShutdown(() => system.stop());

const { key } = await system.createPartner(undefined, {
  name: 'Benchmark partner',
  limitPerMinute: PARTNER_LIMIT_PER_MINUTE,
});
const response = await fetch(`${system.gatewayUrl}/v1/workspaces`, {
  method: 'POST',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ name: 'bench' }),
});
const created = (await response.json()) as { id?: string };
if (response.status !== 201 || !created.id) {
  throw new Error(`POST /v1/workspaces answered ${response.status}: ${JSON.stringify(created)}`);
}

announce({
  url: system.gatewayUrl,
  path: `/v1/workspaces/${created.id}`,
  token: key,
  processes: 'one process (gateway + identity)',
});
