import { ACCOUNT_ANNOUNCEMENTS, type Bus, LocalCache } from '@svc/bus';
import type { AccountsService, ServiceClient } from '@svc/contracts';
import type { Caller } from '@svc/db';
import { errors } from '@svc/errors';
import type { GraphApiError } from '@svc/graph-client';
import type { Logger } from '@svc/logging';

type AccountsClient = ServiceClient<typeof AccountsService>;

/** A connected account as inbox needs it: its owner, workspace and the network's ids. */
export interface InboxAccount {
  id: string;
  partnerId: string;
  workspaceId: string;
  network: string;
  platformId: string;
  /** The Page whose token and Send API an account uses (a photo-network account's linked Page). */
  pageId: string;
  status: string;
  /** When it was last connected (or reconnected); null when accounts does not say. */
  connectedAt: Date | null;
}

/** Kept for a minute at most, even if an announcement were missed. */
const MAX_AGE_MS = 60_000;

/**
 * The only place inbox learns about accounts, which the accounts service owns: the accounts a
 * webhook is about (by the network's id: one per workspace that connected that Page or profile),
 * an account by id, and its token. Every webhook needs the first, so they are kept in memory for a
 * minute at most and dropped when accounts announces a change, whichever announcement it is: the
 * intake refuses an account that is not active, so a status must not outlive its change.
 */
export class AccountsDirectory {
  private readonly byPlatform: LocalCache<InboxAccount[]>;
  /**
   * The network id each kept account was loaded under: `accounts.changed` (status to or from
   * error) names the account by id only, and its entry must go as promptly as on other events.
   */
  private readonly platformOf = new LocalCache<string>({ maxAgeMs: MAX_AGE_MS, maxEntries: 50_000 });
  private readonly tokens: LocalCache<string>;

  constructor(
    bus: Bus,
    private readonly client: AccountsClient,
    private readonly logger: Logger,
  ) {
    this.byPlatform = new LocalCache({
      maxAgeMs: MAX_AGE_MS,
      load: async (platformId) => {
        const accounts = await this.describe({ platformIds: [platformId] });
        for (const account of accounts) this.platformOf.set(account.id, platformId);
        return accounts;
      },
    });
    this.tokens = new LocalCache({
      maxAgeMs: MAX_AGE_MS,
      load: async (accountId) => (await client.getAccountToken({ accountId })).token,
    });
    this.byPlatform.dropOn(
      bus,
      ACCOUNT_ANNOUNCEMENTS,
      (event) => platformIdOf(event.data.account) ?? this.platformOf.peek(event.data.account.id),
    );
    this.tokens.dropOn(bus, ACCOUNT_ANNOUNCEMENTS, (event) => event.data.account.id);
  }

  /** The accounts with this network id on this network, whatever their status. */
  async withPlatformId(network: string, platformId: string): Promise<InboxAccount[]> {
    return (await this.byPlatform.get(platformId)).filter((a) => a.network === network);
  }

  /** An account by id, whatever its scope (undefined once deleted). */
  async byId(accountId: string): Promise<InboxAccount | undefined> {
    const [account] = await this.describe({ accountIds: [accountId] });
    return account;
  }

  /** An account of the caller's scope, else not_found. */
  async visible(caller: Caller, accountId: string): Promise<InboxAccount> {
    const account = await this.byId(accountId);
    if (
      !account ||
      account.partnerId !== caller.partnerId ||
      (caller.workspaceId && account.workspaceId !== caller.workspaceId)
    )
      throw errors.notFound('account');
    return account;
  }

  async token(accountId: string): Promise<string> {
    return this.tokens.get(accountId);
  }

  /** A token the network refused goes back to accounts, which changes the account's status. */
  async reportTokenProblem(accountId: string, error: GraphApiError): Promise<void> {
    const problem = error.tokenProblem;
    if (!problem) return;
    this.tokens.forget(accountId);
    const subcode = Number(error.details?.subcode ?? 0);
    await this.client
      .reportTokenProblem({ accountId, problem, message: error.message, subcode })
      .catch((err: unknown) => this.logger.warn({ err }, 'could not report a token problem to accounts'));
  }

  close(): void {
    this.byPlatform.close();
    this.platformOf.close();
    this.tokens.close();
  }

  private async describe(query: { accountIds?: string[]; platformIds?: string[] }): Promise<InboxAccount[]> {
    const { accounts } = await this.client.describeAccounts({
      accountIds: query.accountIds ?? [],
      platformIds: query.platformIds ?? [],
    });
    return accounts.flatMap(({ account, partnerId }) =>
      account
        ? [
            {
              id: account.id,
              partnerId,
              workspaceId: account.workspaceId,
              network: account.network,
              platformId: account.platformId,
              pageId: account.pageId,
              status: account.status,
              connectedAt: account.connectedAt ? new Date(account.connectedAt) : null,
            },
          ]
        : [],
    );
  }
}

function platformIdOf(account: Record<string, unknown>): string | undefined {
  return typeof account.platform_id === 'string' ? account.platform_id : undefined;
}
