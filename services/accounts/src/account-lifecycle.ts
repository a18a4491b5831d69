import type { WorkspaceDirectory } from '@svc/directory';
import { errors } from '@svc/errors';
import { parseSignedRequest, type TokenProblem } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { accountEvent, changeEvents } from './account-events.ts';
import type { AccountStore } from './account-store.ts';
import type { AccountsConfig } from './config.ts';
import { expiredMessage } from './expiry-sweep.ts';
import type { Account } from './generated/prisma/client.ts';

const SUBCODE_APP_REMOVED = 458;

const DEAUTHORIZED_MESSAGE =
  'The user removed this app at the network provider (deauthorized), so its access was revoked. Connect the account again to restore it.';

/**
 * How accounts leave `active` when their token stops working: a network call finds it dead (any
 * service reports it), or the user removes the app at the provider (deauthorize callback). Expiry
 * is the ExpirySweep's, a deleted workspace the WorkspacePurge's. Each transition is one
 * conditional write, so replicas and repeated reports never emit an event twice.
 */
export class AccountLifecycle {
  constructor(
    private readonly store: AccountStore,
    private readonly workspaces: Pick<WorkspaceDirectory, 'scope'>,
    private readonly config: Pick<AccountsConfig, 'META_APP_SECRET'>,
    private readonly logger: Logger,
    private readonly now: () => Date,
  ) {}

  /** A network call failed with a token error: record it on the account (and tell the partner). */
  async applyTokenProblem(
    account: Account,
    problem: TokenProblem,
    message: string,
    subcode = 0,
  ): Promise<Account> {
    const now = this.now();
    if (problem === 'revoked' && subcode === SUBCODE_APP_REMOVED) {
      await this.revoke([account], DEAUTHORIZED_MESSAGE, 'deauthorized');
    } else if (problem === 'revoked') {
      await this.revoke(
        [account],
        `The network no longer accepts this account's token: ${message}. Connect the account again.`,
        'token_revoked',
      );
    } else if (problem === 'expired') {
      const lastError = `${expiredMessage(now)} (${message})`;
      await this.transition(account, { status: 'expired', lastError }, 'account.expired');
    } else {
      await this.transition(account, {
        status: 'error',
        lastError: `The network refused this account's token: ${message}. Connect the account again.`,
      });
    }
    return (await this.store.current(account.id)) ?? account;
  }

  /**
   * The provider's deauthorize callback: only a signed_request that verifies with the app secret
   * changes anything. Every account the user granted, in every workspace, is revoked.
   */
  async deauthorize(signedRequest: string): Promise<number> {
    const payload = parseSignedRequest(signedRequest, this.config.META_APP_SECRET);
    if (!payload) throw errors.unauthorized('signed_request does not verify with the app secret');
    if (!payload.user_id) throw errors.validation('signed_request', 'signed_request carries no user_id');
    const accounts = await this.store.grantedBy(payload.user_id);
    this.logger.info({ accounts: accounts.length }, 'deauthorize callback verified');
    return this.revoke(accounts, DEAUTHORIZED_MESSAGE, 'deauthorized');
  }

  /**
   * Moves an account out of a live state (active or error) once; `type` is the event to emit, else
   * `accounts.changed` tells the services that cache accounts and `account.changed` the partner.
   */
  private async transition(
    account: Account,
    change: { status: string; lastError: string },
    type?: 'account.expired',
  ): Promise<void> {
    const scope = await this.workspaces.scope(account.workspaceId);
    await this.store.changeLive(
      account.id,
      () => change,
      (before, after) =>
        type
          ? [accountEvent(type, scope, after, { error: change.lastError })]
          : changeEvents(scope, before, after),
    );
  }

  /** Token discarded, scopes emptied, status `revoked`, `account.disconnected` with the reason. */
  private async revoke(accounts: Account[], lastError: string, reason: string): Promise<number> {
    let revoked = 0;
    for (const account of accounts) {
      const scope = await this.workspaces.scope(account.workspaceId);
      if (await this.store.revoke(account, lastError, reason, scope)) revoked += 1;
    }
    return revoked;
  }
}
