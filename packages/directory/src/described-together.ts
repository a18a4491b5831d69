import type { AccountsService, ServiceClient } from '@svc/contracts';
import { errors } from '@svc/errors';
import { type KnownAccount, knownAccounts } from './known-account.ts';

type Waiter = { resolve: (known: KnownAccount) => void; reject: (error: unknown) => void };

/**
 * A loader that asks for every id wanted in the same tick with one DescribeAccounts call. An id
 * accounts does not describe is not_found.
 */
export function describedTogether(
  accounts: ServiceClient<typeof AccountsService>,
): (id: string) => Promise<KnownAccount> {
  let pending: Map<string, Waiter[]> | undefined;
  const flush = async (batch: Map<string, Waiter[]>) => {
    try {
      const found = knownAccounts(await accounts.describeAccounts({ accountIds: [...batch.keys()] }));
      const byId = new Map(found.map((account) => [account.id, account]));
      for (const [id, waiters] of batch) {
        const account = byId.get(id);
        for (const waiter of waiters)
          account ? waiter.resolve(account) : waiter.reject(errors.notFound('account'));
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
