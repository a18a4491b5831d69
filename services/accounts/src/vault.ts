import { CALLER_CREDENTIAL_METADATA, type CallContext } from '@svc/contracts';
import { hashToken, type Keyring, type SealedValues, safeEqual } from '@svc/crypto';
import { errors, ServiceError } from '@svc/errors';
import type { Db } from './db.ts';
import type { Account } from './generated/prisma/client.ts';

/**
 * The token vault. Tokens are sealed with AES-256-GCM under the current key of the keyring (its
 * key id travels in the ciphertext, so keys rotate without a flag day); the additional data is the
 * account's natural key, so a ciphertext copied onto another account does not open.
 */
type AccountKey = Pick<Account, 'workspaceId' | 'network' | 'platformId'>;

const aadOf = (key: AccountKey) => `${key.workspaceId}:${key.network}:${key.platformId}`;

export const sealToken = (keyring: Keyring, key: AccountKey, token: string) =>
  keyring.encrypt(token, aadOf(key));

export function openToken(keyring: Keyring, account: Account): string {
  if (!account.token)
    throw new ServiceError(
      'account_disconnected',
      `account ${account.id} has no usable token (status ${account.status}); reconnect it through a connect link`,
    );
  return keyring.decrypt(account.token, aadOf(account));
}

/**
 * The token the vault hands to a service that publishes or sends: an active account's only. An
 * expired, revoked or errored account may still hold a sealed token (refresh tries it to revive the
 * account), but it is one we know is dead, or one missing what the product needs: the caller fails
 * its work with this reason instead of calling the network with it.
 */
export function handOutToken(keyring: Keyring, account: Account): string {
  if (account.status !== 'active')
    throw new ServiceError(
      'account_disconnected',
      `account ${account.id} is ${account.status}: ${account.lastError ?? 'reconnect it through a connect link'}`,
    );
  return openToken(keyring, account);
}

/**
 * Only the services that publish or send may read tokens. Each presents its credential in call
 * metadata; we keep only hashes of the configured `name:secret` pairs.
 */
export class VaultClients {
  private readonly hashes: Map<string, string>;

  constructor(config: string) {
    this.hashes = new Map(
      config
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean)
        .map((entry) => {
          const [name, secret] = entry.split(':');
          if (!name || !secret) throw new Error('TOKEN_VAULT_CLIENTS entries must be name:secret');
          return [hashToken(secret), name] as const;
        }),
    );
  }

  /** The calling service's name; refuses a call without a known credential. */
  authorize(context: CallContext): string {
    const presented = String(context.metadata.get(CALLER_CREDENTIAL_METADATA)[0] ?? '');
    const hash = presented ? hashToken(presented) : '';
    for (const [known, name] of this.hashes) if (hash && safeEqual(hash, known)) return name;
    throw errors.forbidden('this caller may not read tokens from the vault');
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
