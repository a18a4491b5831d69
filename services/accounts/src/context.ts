import type { OutboxRelay } from '@svc/bus';
import type { Keyring } from '@svc/crypto';
import type { GraphClient } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { AccountsConfig } from './config.ts';
import type { Db } from './db.ts';
import type { IdentityClient } from './events.ts';

/** What the accounts service's operations share; `now` is injectable so tests can move time. */
export interface AccountsContext {
  db: Db;
  /** The pool under `db`, for the hot reads served by named prepared statements. */
  pool: pg.Pool;
  graph: GraphClient;
  keyring: Keyring;
  identity: IdentityClient;
  relay: OutboxRelay;
  config: AccountsConfig;
  logger: Logger;
  now(): Date;
}

/** The redirect URI given to the consent dialog; the code exchange must repeat it exactly. */
export const oauthRedirectUri = (config: AccountsConfig) =>
  `${config.PUBLIC_BASE_URL.replace(/\/$/, '')}/connect/oauth/callback`;
