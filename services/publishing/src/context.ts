import type { AnnouncedCache, Bus, OutboxRelay, WorkspaceCache } from '@svc/bus';
import type { AccountsService, IdentityService, ServiceClient } from '@svc/contracts';
import type { GraphClient } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import type pg from 'pg';
import type { PublishingConfig } from './config.ts';
import type { Db } from './db.ts';
import type { AccountToken, KnownAccount } from './kept-accounts.ts';
import type { MediaStorage } from './media/storage.ts';
import type { SettlementWatch } from './posts/wait.ts';

/** What the publishing service's operations share; `now` is injectable so tests can move time. */
export interface PublishingContext {
  db: Db;
  pool: pg.Pool;
  graph: GraphClient;
  accounts: ServiceClient<typeof AccountsService>;
  identity: ServiceClient<typeof IdentityService>;
  relay: OutboxRelay;
  /** Live workspaces (owner, event scope), dropped when identity announces a change. */
  workspaces: WorkspaceCache;
  /** Account tokens for the publish jobs, dropped when accounts announces a change. */
  tokens: AnnouncedCache<AccountToken>;
  /** Accounts for the checks of new posts, likewise. */
  knownAccounts: AnnouncedCache<KnownAccount>;
  settlements: SettlementWatch;
  bus: Bus;
  storage: MediaStorage;
  config: PublishingConfig;
  logger: Logger;
  now(): Date;
}
