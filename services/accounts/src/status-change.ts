import type { EventEnvelope } from '@svc/contracts/public';
import { accountEvent, type EventScope } from './events.ts';
import type { Account, Prisma } from './generated/prisma/client.ts';

/**
 * The account's row, locked until the transaction ends: the change made next is the only one
 * between this read and its commit, so the status it moved from is exact, and two replicas
 * applying the same report announce it once (the second finds nothing left to change).
 */
export async function lockAccount(tx: Prisma.TransactionClient, id: string): Promise<Account | null> {
  await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${id} FOR UPDATE`;
  return tx.account.findUnique({ where: { id } });
}

/**
 * `account.changed` for partners when a change moved the account to or from `error`, or from one
 * error to another (its `last_error`); none otherwise. Expiry and revocation have their own events,
 * so without this one a partner learned that an account stopped working only when a post failed.
 */
export function statusChangeEvents(scope: EventScope, before: Account, after: Account): EventEnvelope[] {
  const touchesError = before.status === 'error' || after.status === 'error';
  const changed = before.status !== after.status || before.lastError !== after.lastError;
  if (!touchesError || !changed) return [];
  return [accountEvent('account.changed', scope, after, { previous_status: before.status })];
}
