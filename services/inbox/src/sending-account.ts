import type { AccountsDirectory, KnownAccount } from '@svc/directory';
import { ServiceError } from '@svc/errors';

/**
 * The account a send goes out from, which must still be connected and active: a conversation
 * outlives its account (deleting an account keeps its conversations), and answering from one that
 * was deleted, or is expired, revoked or in error, is 409 `account_disconnected` (spec §7), as a
 * post to such an account is. The conversation was found in the caller's scope already.
 */
export async function sendingAccount(accounts: AccountsDirectory, accountId: string): Promise<KnownAccount> {
  const account = await accounts.byId(accountId);
  if (!account)
    throw new ServiceError(
      'account_disconnected',
      `account ${accountId} was disconnected: connect it again to answer (its conversations stay readable)`,
    );
  if (account.status !== 'active')
    throw new ServiceError(
      'account_disconnected',
      `account ${accountId} is ${account.status}; reconnect it through a connect link to answer`,
    );
  return account;
}
