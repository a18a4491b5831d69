import { type EventScope, eventRow, type OutboxRelay, writeOutbox } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import { type Caller, found, ONE_SNAPSHOT, pageWindow, visibleTo } from '@svc/db';
import { newId } from '@svc/ids';
import type pg from 'pg';
import { accountEvent, changeEvents } from './account-events.ts';
import {
  GET_ACCOUNT_BY_ID,
  GET_ACCOUNTS_BY_ID,
  GET_VISIBLE_ACCOUNT,
  lockAccount,
  scopeValues,
} from './account-rows.ts';
import { disconnectedSnapshot } from './account-view.ts';
import type { ConnectCandidate } from './connect-candidates.ts';
import type { Db } from './db.ts';
import type { Account, ConnectLink, Prisma } from './generated/prisma/client.ts';

/** The statuses in which an account works, or could once its grant is fixed. */
const LIVE_STATUSES = ['active', 'error'];

/** Fields a change of a live account writes, decided from its row as it is under the lock. */
type LiveFields = Partial<Pick<Account, 'status' | 'lastError' | 'scopes'>>;

/** What refresh read from the network, written over the account. */
type RefreshedFields = Pick<
  Account,
  'username' | 'displayName' | 'avatarUrl' | 'scopes' | 'tokenExpiresAt' | 'status' | 'lastError'
>;

/**
 * Every read and write of accounts, and the account events written to the outbox with them. The
 * relay is kicked after each commit (its pass is the fallback), so callers never handle outbox rows.
 */
export class AccountStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly db: Db,
    private readonly relay: OutboxRelay,
  ) {}

  /** An account of the caller's scope; another partner's or workspace's is not_found, not forbidden. */
  async visible(caller: Caller, id: string): Promise<Account> {
    const values = [id, ...scopeValues(caller)];
    const { rows } = await this.pool.query<Account>({ ...GET_VISIBLE_ACCOUNT, values });
    return found(rows[0], 'account');
  }

  /** Accounts by id or network id whatever their scope, for services that check the scope themselves. */
  async describe(ids: string[], platformIds: string[] = []): Promise<Account[]> {
    if (ids.length === 0 && platformIds.length === 0) return [];
    const { rows } = await this.pool.query<Account>({ ...GET_ACCOUNTS_BY_ID, values: [ids, platformIds] });
    return rows;
  }

  /** Any account by id, whatever its scope: only for the token vault, whose callers are services. */
  async byId(id: string): Promise<Account> {
    const { rows } = await this.pool.query<Account>({ ...GET_ACCOUNT_BY_ID, values: [id] });
    return found(rows[0], 'account');
  }

  /** A page of the caller's accounts of a workspace, and how many match in all. */
  async list(
    caller: Caller,
    query: { workspaceId: string; network: string; status: string; page: number; limit: number },
  ): Promise<{ accounts: Account[]; total: number }> {
    const where = {
      ...visibleTo(caller),
      workspaceId: query.workspaceId,
      ...(query.network ? { network: query.network } : {}),
      ...(query.status ? { status: query.status } : {}),
    };
    const [accounts, total] = await this.db.$transaction(
      [
        this.db.account.findMany({ where, orderBy: { id: 'asc' }, ...pageWindow(query.page, query.limit) }),
        this.db.account.count({ where }),
      ],
      ONE_SNAPSHOT,
    );
    return { accounts, total };
  }

  /** Every account of the workspace. */
  inWorkspace(workspaceId: string): Promise<Account[]> {
    return this.db.account.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } });
  }

  /** One account of the workspace, else not_found. */
  async ofWorkspace(workspaceId: string, id: string): Promise<Account> {
    return found(await this.db.account.findFirst({ where: { id, workspaceId } }), 'account');
  }

  /** The accounts a user of the network granted, in every workspace; only the live ones if asked. */
  grantedBy(providerUserId: string, { liveOnly = false } = {}): Promise<Account[]> {
    const status = liveOnly ? { status: { in: LIVE_STATUSES } } : {};
    return this.db.account.findMany({ where: { providerUserId, ...status } });
  }

  /** The account as it is now, if it still exists. */
  current(id: string): Promise<Account | null> {
    return this.db.account.findUnique({ where: { id } });
  }

  /**
   * Creates or updates (reconnect: new token, scopes, status back to active) every candidate in one
   * transaction, with one `account.connected` event each. The candidates' tokens are sealed already.
   */
  async saveConnected(
    link: ConnectLink,
    candidates: ConnectCandidate[],
    scope: EventScope,
    now: Date,
  ): Promise<Account[]> {
    return this.commit(async (tx) => {
      const saved: Account[] = [];
      for (const c of candidates) {
        const key = { workspaceId: link.workspaceId, network: c.network, platformId: c.platformId };
        const fields = {
          username: c.username,
          displayName: c.displayName,
          avatarUrl: c.avatarUrl,
          pageId: c.pageId,
          status: c.problem ? 'error' : 'active',
          lastError: c.problem,
          scopes: c.scopes,
          token: c.token,
          tokenExpiresAt: c.tokenExpiresAt,
          providerUserId: c.providerUserId,
          connectedAt: now,
        };
        saved.push(
          await tx.account.upsert({
            where: { workspaceId_network_platformId: key },
            create: { id: newId('account'), partnerId: link.partnerId, ...key, ...fields },
            update: fields,
          }),
        );
      }
      const events = saved.map((account) => accountEvent('account.connected', scope, account));
      return { result: saved, events };
    });
  }

  /**
   * Disconnects accounts: the rows (token and metadata) are removed, posts and conversations keep
   * their history under the account id, and each yields `account.disconnected` whose account shows
   * status `disconnected`.
   */
  async disconnect(accounts: Account[], scope: EventScope, reason?: string): Promise<void> {
    if (accounts.length === 0) return;
    await this.commit(async (tx) => {
      const events = [];
      for (const account of accounts) {
        const removed = await tx.account.deleteMany({ where: { id: account.id } });
        // A concurrent disconnect got there first: it emitted the event, we emit none.
        if (removed.count === 0) continue;
        const snapshot = disconnectedSnapshot(account);
        events.push(accountEvent('account.disconnected', scope, snapshot, reason ? { reason } : {}));
      }
      return { result: undefined, events };
    });
  }

  /** Refresh's reading written over the account, whatever its status (it may revive the account). */
  async saveRefreshed(account: Account, fields: RefreshedFields, scope: EventScope): Promise<Account> {
    return this.commit(async (tx) => {
      const before = (await lockAccount(tx, account.id)) ?? account;
      const after = await tx.account.update({ where: { id: account.id }, data: fields });
      return { result: after, events: changeEvents(scope, before, after) };
    });
  }

  /**
   * Changes a live (active or error) account under its row lock, once: `fields` decides from the
   * row as it is now, `events` says what the change announces. An account no longer live is left.
   */
  async changeLive(
    id: string,
    fields: (before: Account) => LiveFields,
    events: (before: Account, after: Account) => EventEnvelope[],
  ): Promise<void> {
    await this.commit(async (tx) => {
      const before = await lockAccount(tx, id);
      if (!before || !LIVE_STATUSES.includes(before.status)) return { result: undefined, events: [] };
      const after = await tx.account.update({ where: { id }, data: fields(before) });
      return { result: undefined, events: events(before, after) };
    });
  }

  /** Token discarded, scopes emptied, status `revoked`, `account.disconnected` with the reason; false if revoked already. */
  async revoke(account: Account, lastError: string, reason: string, scope: EventScope): Promise<boolean> {
    return this.commit(async (tx) => {
      const moved = await tx.account.updateMany({
        where: { id: account.id, status: { not: 'revoked' } },
        data: { status: 'revoked', token: null, scopes: [], lastError, tokenExpiresAt: null },
      });
      if (moved.count === 0) return { result: false, events: [] };
      const updated = await tx.account.findUniqueOrThrow({ where: { id: account.id } });
      return { result: true, events: [accountEvent('account.disconnected', scope, updated, { reason })] };
    });
  }

  /**
   * Moves `active` accounts whose token expired by `now` to `expired` with `account.expired`, at
   * most `batchSize`. Claims rows with SKIP LOCKED, so several replicas share the work and never
   * double-emit. Answers how many it moved.
   */
  async expireDue(expiry: {
    now: Date;
    batchSize: number;
    scopeOf: (workspaceId: string) => Promise<EventScope>;
    lastError: (account: Account) => string;
  }): Promise<number> {
    const { now, batchSize } = expiry;
    return this.commit(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM accounts WHERE status = 'active' AND token_expires_at <= ${now}
        ORDER BY token_expires_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
      if (rows.length === 0) return { result: 0, events: [] };
      const accounts = await tx.account.findMany({ where: { id: { in: rows.map((r) => r.id) } } });
      const events: EventEnvelope[] = [];
      for (const account of accounts) {
        const error = expiry.lastError(account);
        const updated = await tx.account.update({
          where: { id: account.id },
          data: { status: 'expired', lastError: error },
        });
        events.push(
          accountEvent('account.expired', await expiry.scopeOf(account.workspaceId), updated, { error }),
        );
      }
      return { result: accounts.length, events };
    });
  }

  /** Runs `work` in a transaction that writes its events to the outbox, then wakes the relay for them. */
  private async commit<T>(
    work: (tx: Prisma.TransactionClient) => Promise<{ result: T; events: EventEnvelope[] }>,
  ): Promise<T> {
    const { result, events } = await this.db.$transaction(async (tx) => {
      const done = await work(tx);
      await writeOutbox(tx, done.events.map(eventRow));
      return done;
    });
    if (events.length > 0) this.relay.kick();
    return result;
  }
}
