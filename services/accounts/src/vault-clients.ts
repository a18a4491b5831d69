import { CALLER_CREDENTIAL_METADATA, type CallContext } from '@svc/contracts';
import { hashToken, safeEqual } from '@svc/crypto';
import { errors } from '@svc/errors';

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
