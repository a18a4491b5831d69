import { type EventScope, makeEvent, SIGNALS } from '@svc/bus';
import type { IdentityService, ServiceClient } from '@svc/contracts';
import type { EventEnvelope } from '@svc/contracts/public';
import { accountJson } from './account-view.ts';
import type { Account } from './generated/prisma/client.ts';

export type IdentityClient = ServiceClient<typeof IdentityService>;

export type { EventScope };

/** Partner slug and current external_id of a workspace, read from identity when the event is made. */
export async function scopeOf(
  identity: IdentityClient,
  workspaceId: string,
): Promise<EventScope & { name: string }> {
  const { workspace, partnerSlug } = await identity.describeWorkspace({ workspaceId });
  return {
    partner: partnerSlug,
    workspace: workspaceId,
    external_id: workspace?.externalId ?? null,
    name: workspace?.name ?? '',
  };
}

export type AccountEventType =
  | 'account.connected'
  | 'account.disconnected'
  | 'account.expired'
  | 'account.changed';

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
export function accountChanged(scope: EventScope, account: Pick<Account, 'id'>): EventEnvelope {
  const { partner, workspace, external_id } = scope;
  return makeEvent(
    SIGNALS.accountChanged,
    { partner, workspace, external_id },
    { account: { id: account.id } },
  );
}
