// The system under test of bench:publish: every service in its own process from its production
// bundle, started by @svc/testing as the crash tests start theirs.
import { setPriority } from 'node:os';
import path from 'node:path';
import { buildBundles, type System, startSystem } from '@svc/testing/system';
import { NATS_URL, prefix, REDIS_URL, say, WORKER_NICE } from './settings.ts';

/**
 * Identity, accounts, webhooks, publishing as two processes (its API and its workers, as it is
 * deployed when the API must stay responsive however busy the workers are), the gateway and the
 * graph-sandbox (zero container processing delay), each a child process. Service logs (warn and
 * above) go to stderr: stdout carries only the results.
 */
export async function startPublishSystem(
  databaseUrl: string,
  profileDir: string | undefined,
): Promise<System> {
  say('building the services (turbo run build) …');
  buildBundles();
  const system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'gateway'],
    run: 'bundle',
    databaseUrl,
    prefix,
    env: { LOG_LEVEL: 'warn', REDIS_URL, NATS_URL },
    serviceEnv: {
      publishing: { PUBLISHING_ROLE: 'api' },
      gateway: { UNAUTHENTICATED_LIMIT_PER_MINUTE: '1000000' },
    },
    sandbox: { run: 'bundle', containerProcessingMs: 0, env: { LOG_LEVEL: 'warn' } },
    logs: 'stderr',
    // One folder per process: tsx's loader thread writes a profile of its own beside the main thread's.
    nodeFlags: (label) =>
      profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, label)}`] : [],
  });
  const worker = await system.start('publishing', {
    label: 'publishing-worker',
    env: { PUBLISHING_ROLE: 'worker' },
  });
  // As deployed (docker-compose.yml), the workers weigh a quarter of a request-serving process.
  const pid = worker.child?.process.pid;
  if (pid && WORKER_NICE) setPriority(pid, WORKER_NICE);
  return system;
}

/** Each child's pid and label, to attribute CPU time and Postgres connections to services. */
export function processNames(system: System): Map<number, string> {
  return new Map(system.children().map((child) => [child.process.pid ?? -1, child.label]));
}
