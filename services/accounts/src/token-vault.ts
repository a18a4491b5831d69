import type { Keyring, SealedValues } from '@svc/crypto';
import { ServiceError } from '@svc/errors';
import type { Db } from './db.ts';
import type { Account } from './generated/prisma/client.ts';

/**
 * The token vault. Tokens are sealed with AES-256-GCM under the current key of the keyring (its
 * key id travels in the ciphertext, so keys rotate without a flag day); the additional data is the
 * account's natural key, so a ciphertext copied onto another account does not open.
 */
type AccountKey = Pick<Account, 'workspaceId' | 'network' | 'platformId'>;

const aadOf = (key: AccountKey) => `${key.workspaceId}:${key.network}:${key.platformId}`;

export class TokenVault {
  constructor(private readonly keyring: Keyring) {}

  seal(key: AccountKey, token: string): string {
    return this.keyring.encrypt(token, aadOf(key));
  }

  open(account: Account): string {
    if (!account.token)
      throw new ServiceError(
        'account_disconnected',
        `account ${account.id} has no usable token (status ${account.status}); reconnect it through a connect link`,
      );
    return this.keyring.decrypt(account.token, aadOf(account));
  }

  /**
   * The token the vault hands to a service that publishes or sends: an active account's only. An
   * expired, revoked or errored account may still hold a sealed token (refresh tries it to revive the
   * account), but it is one we know is dead, or one missing what the product needs: the caller fails
   * its work with this reason instead of calling the network with it.
   */
  handOut(account: Account): string {
    if (account.status !== 'active')
      throw new ServiceError(
        'account_disconnected',
        `account ${account.id} is ${account.status}: ${account.lastError ?? 'reconnect it through a connect link'}`,
      );
    return this.open(account);
  }

  /** A user token held while the user picks Pages, bound to the choice's id hash. */
  sealHeld(userToken: string, choiceHash: string): string {
    return this.keyring.encrypt(userToken, choiceHash);
  }

  openHeld(sealed: string, choiceHash: string): string {
    return this.keyring.decrypt(sealed, choiceHash);
  }
}

/** Account tokens, as `pnpm rotate-keys` re-seals them (see `reseal`). */
export function sealedTokens(db: Db): SealedValues {
  return {
    what: 'network tokens',
    async page(after, take) {
      const rows = await db.account.findMany({
        where: { token: { not: null }, id: { gt: after } },
        orderBy: { id: 'asc' },
        take,
      });
      return rows.map((row) => ({ key: row.id, sealed: row.token as string, aad: aadOf(row) }));
    },
    async replace({ key, sealed }, token) {
      const { count } = await db.account.updateMany({ where: { id: key, token: sealed }, data: { token } });
      return count === 1;
    },
  };
}
