import { ACCOUNT_ANNOUNCEMENTS, type Bus, LocalCache } from '@svc/bus';
import type { Account, AccountsService, ServiceClient } from '@svc/contracts';
import type { Caller } from '@svc/db';
import { errors, ServiceError } from '@svc/errors';
import type { GraphApiError } from '@svc/graph-client';
import type { Logger } from '@svc/logging';

/**
 * What publishing keeps of accounts, which the accounts service owns: their tokens for the publish
 * jobs, and the accounts themselves for the checks of every new post. Both were a gRPC call each
 * time (per target, per post). Kept in this process's memory (never written anywhere) for a minute
 * at most, and dropped as soon as accounts announces a change: its account events, and
 * `accounts.changed` for the changes partners get no event for (status to or from `error`).
 */
/** Kept for a minute at most, even if an announcement were missed. */
const MAX_AGE_MS = 60_000;

type AccountsClient = ServiceClient<typeof AccountsService>;

/** An account's token as a publish job uses it, with the network's id of the account. */
export interface AccountToken {
  token: string;
  platformId: string;
}

/** An account and its owner: the caller's scope is checked against it. */
export interface KnownAccount {
  account: Account;
  partnerId: string;
}

/**
 * The only place publishing learns about accounts and their tokens: the accounts of new posts
 * (checked against the caller's scope), the tokens of publish jobs, and the token problems the
 * networks report, which go back to the accounts service.
 */
export class AccountsDirectory {
  /**
   * Tokens for the publish jobs; a refused one is dropped (see reportTokenProblem). Without them
   * each job asks accounts: in bench:publish the accounts process then took 12% of a core and the
   * worker 8% more, for 108 targets/s against 113.
   */
  private readonly tokens: LocalCache<AccountToken>;
  /**
   * Accounts by id; an unknown id is not_found (and not kept). They keep post creation off a gRPC
   * call per post: in bench:publish, POST p99 under the target load was 438 ms without them
   * against 187 ms with them.
   */
  private readonly known: LocalCache<KnownAccount>;

  constructor(
    bus: Bus,
    private readonly client: AccountsClient,
    private readonly logger: Logger,
  ) {
    this.tokens = new LocalCache({ maxAgeMs: MAX_AGE_MS, load: (accountId) => loadToken(client, accountId) });
    this.known = new LocalCache({ maxAgeMs: MAX_AGE_MS, load: describedTogether(client) });
    for (const cache of [this.tokens, this.known])
      cache.dropOn(bus, ACCOUNT_ANNOUNCEMENTS, (event) => event.data.account.id);
  }

  /**
   * The account's token for a publish job, or why there is none: the account is gone, or no
   * longer active (accounts hands out no token of an expired, revoked or errored account, and its
   * announcement of the change drops the token kept here).
   */
  async token(accountId: string): Promise<AccountToken | { error: string }> {
    try {
      return await this.tokens.get(accountId);
    } catch (error) {
      if (isGone(error)) return { error: `the account was disconnected before publishing: ${error.message}` };
      throw error;
    }
  }

  /** The accounts of these ids in the caller's scope (undefined for one unknown or out of scope). */
  async visible(caller: Caller, ids: string[]): Promise<(Account | undefined)[]> {
    const known = await Promise.all(
      ids.map((id) =>
        this.known.get(id).catch((error: unknown) => {
          if (error instanceof ServiceError && error.code === 'not_found') return undefined;
          throw error;
        }),
      ),
    );
    return known.map((k) =>
      k &&
      k.partnerId === caller.partnerId &&
      (!caller.workspaceId || k.account.workspaceId === caller.workspaceId)
        ? k.account
        : undefined,
    );
  }

  /**
   * A dead token also changes the account's status (through accounts), so the partner learns of it.
   * The kept token is dropped first; when accounts now holds another one (the account was
   * reconnected and its announcement has not arrived yet), the refusal was of the old token and is
   * not reported.
   */
  async reportTokenProblem(accountId: string, usedToken: string, error: GraphApiError): Promise<void> {
    const problem = error.tokenProblem;
    if (!problem) return;
    this.tokens.forget(accountId);
    const current = await this.tokens.get(accountId).catch(() => undefined);
    if (current && current.token !== usedToken) return;
    await this.client
      .reportTokenProblem({
        accountId,
        problem,
        message: error.message,
        subcode: Number(error.details?.subcode ?? 0),
      })
      .catch((err: unknown) => this.logger.warn({ err }, 'could not report a token problem to accounts'));
  }

  close(): void {
    this.tokens.close();
    this.known.close();
  }
}

const isGone = (error: unknown): error is ServiceError =>
  error instanceof ServiceError && (error.code === 'account_disconnected' || error.code === 'not_found');

async function loadToken(client: AccountsClient, accountId: string): Promise<AccountToken> {
  const { token, account } = await client.getAccountToken({ accountId });
  return { token, platformId: account?.platformId ?? '' };
}

/** A loader that asks for every id wanted in the same tick with one DescribeAccounts call. */
function describedTogether(accounts: AccountsClient): (id: string) => Promise<KnownAccount> {
  type Waiter = { resolve: (known: KnownAccount) => void; reject: (error: unknown) => void };
  let pending: Map<string, Waiter[]> | undefined;
  const flush = async (batch: Map<string, Waiter[]>) => {
    try {
      const { accounts: found } = await accounts.describeAccounts({ accountIds: [...batch.keys()] });
      const byId = new Map(found.map((d) => [d.account?.id ?? '', d]));
      for (const [id, waiters] of batch) {
        const described = byId.get(id);
        for (const waiter of waiters)
          described?.account
            ? waiter.resolve({ account: described.account, partnerId: described.partnerId })
            : waiter.reject(errors.notFound('account'));
      }
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
    }
  };
  return (id) =>
    new Promise<KnownAccount>((resolve, reject) => {
      if (!pending) {
        const batch = new Map<string, Waiter[]>();
        pending = batch;
        queueMicrotask(() => {
          pending = undefined;
          void flush(batch);
        });
      }
      pending.set(id, [...(pending.get(id) ?? []), { resolve, reject }]);
    });
}
