import { AnnouncedCache, type Bus, SIGNALS } from '@svc/bus';
import type { Account, AccountsService, ServiceClient } from '@svc/contracts';
import { errors } from '@svc/errors';

/**
 * What publishing keeps of accounts, which the accounts service owns: their tokens for the publish
 * jobs, and the accounts themselves for the checks of every new post. Both were a gRPC call each
 * time (per target, per post). Kept in this process's memory (never written anywhere) for a minute
 * at most, and dropped as soon as accounts announces a change: its account events, and
 * `accounts.changed` for the changes partners get no event for (status to or from `error`).
 */
const ACCOUNT_CHANGES = [
  'account.connected',
  'account.disconnected',
  'account.expired',
  SIGNALS.accountChanged,
] as const;
const MAX_AGE_MS = 60_000;

type AccountsClient = ServiceClient<typeof AccountsService>;

const accountIdOf = (payload: unknown) =>
  (payload as { data?: { account?: { id?: string } } } | undefined)?.data?.account?.id;

/** An account's token as a publish job uses it, with the network's id of the account. */
export interface AccountToken {
  token: string;
  platformId: string;
}

/** Tokens for the publish jobs; a refused one is dropped by the worker (see reportTokenProblem). */
export function accountTokens(bus: Bus, accounts: AccountsClient): AnnouncedCache<AccountToken> {
  return new AnnouncedCache(bus, {
    types: ACCOUNT_CHANGES,
    keyOf: accountIdOf,
    load: async (accountId) => {
      const { token, account } = await accounts.getAccountToken({ accountId });
      return { token, platformId: account?.platformId ?? '' };
    },
    maxAgeMs: MAX_AGE_MS,
  });
}

/** An account and its owner: the caller's scope is checked against it (see posts/checks.ts). */
export interface KnownAccount {
  account: Account;
  partnerId: string;
}

/** Accounts by id; an unknown id is not_found (and not kept). */
export function knownAccounts(bus: Bus, accounts: AccountsClient): AnnouncedCache<KnownAccount> {
  return new AnnouncedCache(bus, {
    types: ACCOUNT_CHANGES,
    keyOf: accountIdOf,
    load: describedTogether(accounts),
    maxAgeMs: MAX_AGE_MS,
  });
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
