import type { Account, DescribeAccountsResponse } from '@svc/contracts';

/** An account as accounts describes it, with its owner (the caller's scope is checked against both). */
export type KnownAccount = Account & { partnerId: string };

export const knownAccounts = ({ accounts }: DescribeAccountsResponse): KnownAccount[] =>
  accounts.flatMap(({ account, partnerId }) => (account ? [{ ...account, partnerId }] : []));
