import type { WorkspaceDirectory } from '@svc/directory';
import { readWebhookBody } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { z } from 'zod';
import { changeEvents } from './account-events.ts';
import type { AccountStore } from './account-store.ts';
import { grantProblem, type Network } from './grant-check.ts';

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

export class ProviderWebhooks {
  constructor(
    private readonly store: AccountStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly logger: Logger,
  ) {}

  async handle(text: string): Promise<void> {
    const read = readWebhookBody(text);
    if ('unreadable' in read || read.body.object !== 'permissions') return;
    for (const entry of read.body.entry) {
      for (const raw of entry.changes ?? []) {
        const change = permissionChange.safeParse(raw);
        const verb = change.data?.value?.verb;
        if (change.success && (verb === 'revoked' || verb === 'granted'))
          await this.applyPermissionChange(entry.id, change.data.field, verb);
      }
    }
  }

  private async applyPermissionChange(
    providerUserId: string,
    scope: string,
    verb: 'granted' | 'revoked',
  ): Promise<void> {
    const accounts = await this.store.grantedBy(providerUserId, { liveOnly: true });
    for (const account of accounts) {
      const eventScope = await this.workspaces.scope(account.workspaceId);
      // Decided under the lock: the change applies to the scopes as they are now.
      await this.store.changeLive(
        account.id,
        (before) => {
          const scopes =
            verb === 'revoked'
              ? before.scopes.filter((s) => s !== scope)
              : [...new Set([...before.scopes, scope])];
          const problem = grantProblem(before.network as Network, before.displayName, scopes);
          return { scopes, status: problem ? 'error' : 'active', lastError: problem };
        },
        (before, after) => changeEvents(eventScope, before, after),
      );
    }
    this.logger.info({ scope, verb, accounts: accounts.length }, 'permission change applied');
  }
}
