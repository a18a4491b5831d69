import type { RunningSandbox } from '@svc/graph-sandbox';
import type { InProcess } from './in-process.ts';
import type { LogLine } from './logs.ts';
import type { SandboxControl } from './sandbox.ts';
import { type System, startSystem } from './system.ts';

/** Graph calls retried after 10 ms instead of the production back-off, so failure tests stay short. */
export const FAST_GRAPH_RETRIES = { GRAPH_API_RETRY_BASE_MS: '10' };

/**
 * The whole system in this process for one test file: a fresh database cloned from the migrated
 * template, its own Redis key prefix and NATS stream prefix, every service talking over real
 * gRPC/HTTP, the graph-sandbox, a media folder. Every log line is captured so tests can assert on it.
 */
export interface Stack extends InProcess {
  system: System;
  databaseUrl: string;
  prefix: string;
  logs: LogLine[];
  /** This stack's media volume (a fresh temporary folder). */
  mediaDir: string;
  sandbox: RunningSandbox;
  sandboxControl: SandboxControl;
  /** Another gateway of this stack (its own port), with extra variables. */
  startGateway(env?: Record<string, string>): Promise<InProcess['gateway']>;
  /** Another publishing process of this stack that runs only the publish workers (PUBLISHING_ROLE=worker). */
  startPublishingWorker(): Promise<InProcess['publishing']>;
  createPartner(slug?: string): Promise<{ partnerId: string; key: string }>;
  stop(): Promise<void>;
}

/** `env` goes to every service (a limit, a role...). */
export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const system = await startSystem({
    services: ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'],
    env,
    serviceEnv: { accounts: FAST_GRAPH_RETRIES, publishing: FAST_GRAPH_RETRIES, inbox: FAST_GRAPH_RETRIES },
  });
  const sandbox = system.sandbox;
  if (!sandbox) throw new Error('the stack starts the sandbox in this process');
  const another = async <N extends 'gateway' | 'publishing'>(name: N, extra: Record<string, string>) =>
    (await system.start(name, { env: extra })).service as InProcess[N];
  return {
    system,
    databaseUrl: system.databaseUrl,
    prefix: system.prefix,
    logs: system.logs,
    mediaDir: system.mediaDir,
    sandbox,
    sandboxControl: system.sandboxControl,
    identity: system.service('identity'),
    accounts: system.service('accounts'),
    webhooks: system.service('webhooks'),
    publishing: system.service('publishing'),
    inbox: system.service('inbox'),
    gateway: system.service('gateway'),
    startGateway: (extra = {}) => another('gateway', extra),
    startPublishingWorker: () => another('publishing', { PUBLISHING_ROLE: 'worker' }),
    createPartner: (slug) => system.createPartner(slug),
    stop: () => system.stop(),
  };
}
