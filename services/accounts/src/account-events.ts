import { type EventScope, makeEvent, SIGNALS } from '@svc/bus';
import type { EventEnvelope } from '@svc/contracts/public';
import { accountJson } from './account-view.ts';
import type { Account } from './generated/prisma/client.ts';

type AccountEventType = 'account.connected' | 'account.disconnected' | 'account.expired' | 'account.changed';

/** An account event whose `data.account` is the record as `GET /v1/accounts/:id` shows it now. */
export function accountEvent(
  type: AccountEventType,
  scope: EventScope,
  account: Account,
  extra: { reason?: string; error?: string; previous_status?: string } = {},
): EventEnvelope {
  const { partner, workspace, external_id } = scope;
  return makeEvent(type, { partner, workspace, external_id }, { account: accountJson(account), ...extra });
}

/** `accounts.changed`: a change of the account without a partner event, for services' caches. */
function accountChanged(scope: EventScope, account: Pick<Account, 'id'>): EventEnvelope {
  const { partner, workspace, external_id } = scope;
  return makeEvent(
    SIGNALS.accountChanged,
    { partner, workspace, external_id },
    { account: { id: account.id } },
  );
}

/**
 * What a change of the account's fields announces: `accounts.changed` for the services that cache
 * accounts, and `account.changed` for partners when the change moved the account to or from
 * `error`, or from one error to another (its `last_error`). Expiry and revocation have their own
 * events, so without this one a partner learned that an account stopped working only when a post
 * failed.
 */
export function changeEvents(scope: EventScope, before: Account, after: Account): EventEnvelope[] {
  const touchesError = before.status === 'error' || after.status === 'error';
  const changed = before.status !== after.status || before.lastError !== after.lastError;
  const forPartners =
    touchesError && changed
      ? [accountEvent('account.changed', scope, after, { previous_status: before.status })]
      : [];
  return [accountChanged(scope, after), ...forPartners];
}
