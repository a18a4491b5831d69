import { ACCOUNT_ANNOUNCEMENTS, announcedKeys, type Bus } from '@svc/bus';
import { LocalCache } from '@svc/cache';
import type { AccountsService, ServiceClient } from '@svc/contracts';
import { type Caller, inScope } from '@svc/db';
import { ServiceError } from '@svc/errors';
import type { GraphApiError } from '@svc/graph-client';
import type { Logger } from '@svc/logging';
import { describedTogether } from './described-together.ts';
import { type KnownAccount, knownAccounts } from './known-account.ts';

type AccountsClient = ServiceClient<typeof AccountsService>;

/** An account's token as the networks' calls use it, with the network's id of the account. */
export interface AccountToken {
  token: string;
  platformId: string;
}

/** Kept for a minute at most, even if an announcement were missed. */
const MAX_AGE_MS = 60_000;

/**
 * What a service keeps of accounts, which the accounts service owns: accounts by id (the targets
 * of every new post, the account a message is sent from), by the network's id (the accounts every
 * webhook is about: one per workspace that connected that Page or profile), and their tokens. Each
 * was a gRPC call every time. Kept in this process's memory (never written anywhere) for a minute
 * at most, and dropped as soon as accounts announces a change, whichever announcement it is (its
 * account events, and `accounts.changed` for the changes partners get no event for, status to or
 * from `error`): a post, a send or a webhook refuses an account that is not active, so a status
 * must not outlive its change by more than the announcement's trip.
 */
export class AccountsDirectory {
  /** By id; an unknown id is not kept. Asked together: a post's targets are one call. */
  private readonly known: LocalCache<KnownAccount>;
  private readonly byPlatformId: LocalCache<KnownAccount[]>;
  /**
   * The network id each account kept by it was loaded under: `accounts.changed` names the account
   * by id only, and its entry must go as promptly as on other announcements.
   */
  private readonly platformOf = new LocalCache<string>({ maxAgeMs: MAX_AGE_MS, maxEntries: 50_000 });
  /** A refused one is dropped (see reportTokenProblem). */
  private readonly tokens: LocalCache<AccountToken>;

  constructor(
    bus: Bus,
    private readonly client: AccountsClient,
    private readonly logger: Logger,
  ) {
    const announcedById = announcedKeys(bus, ACCOUNT_ANNOUNCEMENTS, (event) => event.data.account.id);
    this.known = new LocalCache({ maxAgeMs: MAX_AGE_MS, load: describedTogether(client) }).dropOn(
      announcedById,
    );
    this.tokens = new LocalCache({
      maxAgeMs: MAX_AGE_MS,
      load: async (accountId) => {
        const { token, account } = await client.getAccountToken({ accountId });
        return { token, platformId: account?.platformId ?? '' };
      },
    }).dropOn(announcedById);
    this.byPlatformId = new LocalCache({
      maxAgeMs: MAX_AGE_MS,
      load: async (platformId) => {
        const accounts = knownAccounts(await client.describeAccounts({ platformIds: [platformId] }));
        for (const account of accounts) this.platformOf.set(account.id, platformId);
        return accounts;
      },
    }).dropOn(
      announcedKeys(
        bus,
        ACCOUNT_ANNOUNCEMENTS,
        (event) => platformIdOf(event.data.account) ?? this.platformOf.peek(event.data.account.id),
      ),
    );
  }

  /** An account by id, whatever its scope and status (undefined once deleted). */
  async byId(accountId: string): Promise<KnownAccount | undefined> {
    try {
      return await this.known.get(accountId);
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /** The accounts of these ids in the caller's scope (undefined for one unknown or out of scope). */
  async visible(caller: Caller, ids: string[]): Promise<(KnownAccount | undefined)[]> {
    const accounts = await Promise.all(ids.map((id) => this.byId(id)));
    return accounts.map((account) => (account && inScope(caller, account) ? account : undefined));
  }

  /** The accounts with this network id on this network, whatever their scope and status. */
  async withPlatformId(network: string, platformId: string): Promise<KnownAccount[]> {
    return (await this.byPlatformId.get(platformId)).filter((account) => account.network === network);
  }

  /**
   * The account's token. Accounts refuses it for an account that is gone or no longer active
   * (see accountGone): it hands out no token of an expired, revoked or errored account, and its
   * announcement of the change drops the token kept here.
   */
  async token(accountId: string): Promise<AccountToken> {
    return this.tokens.get(accountId);
  }

  /**
   * A dead token also changes the account's status (through accounts), so the partner learns of it.
   * The kept token is dropped first; when accounts now holds another one (the account was
   * reconnected and its announcement has not arrived yet), the refusal was of the old token and is
   * not reported.
   */
  async reportTokenProblem(accountId: string, usedToken: string, error: GraphApiError): Promise<void> {
    const problem = error.tokenProblem;
    if (!problem) return;
    this.tokens.forget(accountId);
    const current = await this.tokens.get(accountId).catch(() => undefined);
    if (current && current.token !== usedToken) return;
    await this.client
      .reportTokenProblem({
        accountId,
        problem,
        message: error.message,
        subcode: Number(error.details?.subcode ?? 0),
      })
      .catch((err: unknown) => this.logger.warn({ err }, 'could not report a token problem to accounts'));
  }

  close(): void {
    this.known.close();
    this.byPlatformId.close();
    this.platformOf.close();
    this.tokens.close();
  }
}

/** Accounts' refusal of an account that is gone (deleted) or not active: asking again never helps. */
export const accountGone = (error: unknown): error is ServiceError =>
  error instanceof ServiceError && (error.code === 'account_disconnected' || error.code === 'not_found');

function platformIdOf(account: Record<string, unknown>): string | undefined {
  return typeof account.platform_id === 'string' ? account.platform_id : undefined;
}
