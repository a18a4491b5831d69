import type { Writable } from 'node:stream';
import type { startAccounts } from '@svc/accounts/service';
import { parseConfig } from '@svc/config';
import type { startGateway } from '@svc/gateway/service';
import type { startIdentity } from '@svc/identity/service';
import type { startInbox } from '@svc/inbox/service';
import { createLogger } from '@svc/logging';
import type { startPublishing } from '@svc/publishing/service';
import type { startWebhooks } from '@svc/webhooks/service';

/** What each service's start function returns, for tests that reach into a running service. */
export interface InProcess {
  identity: Awaited<ReturnType<typeof startIdentity>>;
  accounts: Awaited<ReturnType<typeof startAccounts>>;
  webhooks: Awaited<ReturnType<typeof startWebhooks>>;
  publishing: Awaited<ReturnType<typeof startPublishing>>;
  inbox: Awaited<ReturnType<typeof startInbox>>;
  gateway: Awaited<ReturnType<typeof startGateway>>;
}

import type { ServiceName } from './wiring.ts';

export type { ServiceName };

/** The third argument of each service's start function (an injected clock, say), where it has one. */
export interface StartOptions {
  accounts?: Parameters<typeof startAccounts>[2];
  webhooks?: Parameters<typeof startWebhooks>[2];
  publishing?: Parameters<typeof startPublishing>[2];
  inbox?: Parameters<typeof startInbox>[2];
}

/**
 * Starts one service in this process exactly as its `main` does (its config schema over the
 * environment, then its start function), with logs going to `destination`. The service's modules
 * are loaded only when it is started, so a bench that runs everything as child processes never
 * loads them into the process that measures.
 */
export async function startInProcess<N extends ServiceName>(
  name: N,
  env: Record<string, string>,
  destination: Writable,
  options: StartOptions = {},
): Promise<InProcess[N]> {
  const logger = createLogger(name, { destination, level: env.LOG_LEVEL ?? 'info' });
  const started = await STARTERS[name](env, logger, options);
  return started as InProcess[N];
}

type Logger = ReturnType<typeof createLogger>;
type Starter = (env: Record<string, string>, logger: Logger, options: StartOptions) => Promise<unknown>;

const STARTERS: Record<ServiceName, Starter> = {
  async identity(env, logger) {
    const [{ startIdentity }, { identityConfigSchema }] = await Promise.all([
      import('@svc/identity/service'),
      import('@svc/identity/config'),
    ]);
    return startIdentity(parseConfig(identityConfigSchema(env), env), logger);
  },
  async accounts(env, logger, options) {
    const [{ startAccounts }, { accountsConfigSchema }] = await Promise.all([
      import('@svc/accounts/service'),
      import('@svc/accounts/config'),
    ]);
    return startAccounts(parseConfig(accountsConfigSchema(env), env), logger, options.accounts);
  },
  async webhooks(env, logger, options) {
    const [{ startWebhooks }, { webhooksConfigSchema }] = await Promise.all([
      import('@svc/webhooks/service'),
      import('@svc/webhooks/config'),
    ]);
    return startWebhooks(parseConfig(webhooksConfigSchema(env), env), logger, options.webhooks);
  },
  async publishing(env, logger, options) {
    const [{ startPublishing }, { publishingConfigSchema }] = await Promise.all([
      import('@svc/publishing/service'),
      import('@svc/publishing/config'),
    ]);
    return startPublishing(parseConfig(publishingConfigSchema(env), env), logger, options.publishing);
  },
  async inbox(env, logger, options) {
    const [{ startInbox }, { inboxConfigSchema }] = await Promise.all([
      import('@svc/inbox/service'),
      import('@svc/inbox/config'),
    ]);
    return startInbox(parseConfig(inboxConfigSchema(env), env), logger, options.inbox);
  },
  async gateway(env, logger) {
    const [{ startGateway }, { gatewayConfigSchema }] = await Promise.all([
      import('@svc/gateway/service'),
      import('@svc/gateway/config'),
    ]);
    return startGateway(parseConfig(gatewayConfigSchema(env), env), logger);
  },
};
