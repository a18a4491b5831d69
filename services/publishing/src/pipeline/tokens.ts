import { AnnouncedCache, type Bus } from '@svc/bus';
import type { AccountsService, ServiceClient } from '@svc/contracts';

/** An account's token as a publish job uses it, with the network's id of the account. */
export interface AccountToken {
  token: string;
  platformId: string;
}

/** The account events after which a kept token may be wrong: reconnected, disconnected, expired. */
const TOKEN_CHANGES = ['account.connected', 'account.disconnected', 'account.expired'] as const;

/**
 * Account tokens, kept in this worker's memory (never written anywhere) for a minute: every
 * target needs its account's token, and asking accounts each time was a gRPC call per target.
 * Accounts announces each change of a token through its events, which drop the token here; a
 * refused token is dropped by the worker (see reportTokenProblem). A failed read (a disconnected
 * account) is not kept.
 */
export function accountTokens(
  bus: Bus,
  accounts: ServiceClient<typeof AccountsService>,
): AnnouncedCache<AccountToken> {
  return new AnnouncedCache(bus, {
    types: TOKEN_CHANGES,
    keyOf: (payload) => (payload as { data?: { account?: { id?: string } } } | undefined)?.data?.account?.id,
    load: async (accountId) => {
      const { token, account } = await accounts.getAccountToken({ accountId });
      return { token, platformId: account?.platformId ?? '' };
    },
    maxAgeMs: 60_000,
  });
}
