import { eventRow, writeOutbox } from '@svc/bus';
import { readWebhookBody } from '@svc/graph-client';
import { z } from 'zod';
import type { AccountsContext } from './context.ts';
import { accountChanged, scopeOf } from './events.ts';
import { grantProblem, type Network } from './grant-check.ts';
import { lockAccount, statusChangeEvents } from './status-change.ts';

/**
 * The account-related part of Meta's webhooks: `object: "permissions"` tells us that a user granted
 * or revoked one permission (entry.id = the user, changes[].field = the permission). The accounts
 * of that user get their scopes and status updated at once, so a revoked publishing permission is
 * visible before the next post fails. Everything else (messages, comments) is inbox's.
 */
const permissionChange = z.looseObject({
  field: z.string(),
  value: z.looseObject({ verb: z.string() }).optional(),
});

export async function handleProviderWebhook(ctx: AccountsContext, text: string): Promise<void> {
  const read = readWebhookBody(text);
  if ('unreadable' in read || read.body.object !== 'permissions') return;
  for (const entry of read.body.entry) {
    for (const raw of entry.changes ?? []) {
      const change = permissionChange.safeParse(raw);
      const verb = change.data?.value?.verb;
      if (change.success && (verb === 'revoked' || verb === 'granted'))
        await applyPermissionChange(ctx, entry.id, change.data.field, verb);
    }
  }
}

async function applyPermissionChange(
  ctx: AccountsContext,
  providerUserId: string,
  scope: string,
  verb: 'granted' | 'revoked',
): Promise<void> {
  const accounts = await ctx.db.account.findMany({
    where: { providerUserId, status: { in: ['active', 'error'] } },
  });
  for (const account of accounts) {
    const eventScope = await scopeOf(ctx.identity, account.workspaceId);
    await ctx.db.$transaction(async (tx) => {
      // Read again under lock: the change applies to the scopes as they are now.
      const before = await lockAccount(tx, account.id);
      if (!before || !['active', 'error'].includes(before.status)) return;
      const scopes =
        verb === 'revoked'
          ? before.scopes.filter((s) => s !== scope)
          : [...new Set([...before.scopes, scope])];
      const problem = grantProblem(before.network as Network, before.displayName, scopes);
      const after = await tx.account.update({
        where: { id: account.id },
        data: { scopes, status: problem ? 'error' : 'active', lastError: problem },
      });
      const events = [accountChanged(eventScope, after), ...statusChangeEvents(eventScope, before, after)];
      await writeOutbox(tx, events.map(eventRow));
    });
  }
  if (accounts.length > 0) ctx.relay.kick();
  ctx.logger.info({ scope, verb, accounts: accounts.length }, 'permission change applied');
}
