import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type AppEnv, envSecret, z } from '@svc/config';

/**
 * AES-256-GCM with a key id in every ciphertext, so keys can rotate: new data is sealed with the
 * current key, old ciphertexts stay readable while their key is in the ring, and `needsRotation`
 * tells a re-encryption job what to rewrite.
 *
 * Ciphertext text form: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts).
 * `aad` binds a ciphertext to its owner (for example an account id) so it cannot be moved.
 */
export class Keyring {
  constructor(
    private readonly keys: ReadonlyMap<string, Buffer>,
    readonly currentKeyId: string,
  ) {
    if (!keys.has(currentKeyId)) throw new Error(`current key "${currentKeyId}" is not in the keyring`);
  }

  encrypt(plaintext: string, aad = ''): string {
    const key = this.keys.get(this.currentKeyId) as Buffer;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', this.currentKeyId, b64(iv), b64(cipher.getAuthTag()), b64(body)].join('.');
  }

  decrypt(sealed: string, aad = ''): string {
    const [version, keyId, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !keyId || !iv || !tag || body === undefined)
      throw new Error('malformed ciphertext');
    const key = this.keys.get(keyId);
    if (!key) throw new Error(`ciphertext uses key "${keyId}", which is not in the keyring`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }

  needsRotation(sealed: string): boolean {
    return sealed.split('.')[1] !== this.currentKeyId;
  }
}

/**
 * Reads a keyring from config text `kid1:<base64 32 bytes>,kid2:<...>`; the first key is current.
 */
export function parseKeyring(text: string): Keyring {
  const keys = new Map<string, Buffer>();
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [keyId, material] = entry.split(':');
    if (!keyId || !material || !/^[A-Za-z0-9_-]{1,32}$/.test(keyId))
      throw new Error(`bad keyring entry "${keyId}"`);
    const key = Buffer.from(material, 'base64');
    if (key.length !== 32) throw new Error(`key "${keyId}" must be 32 bytes of base64`);
    keys.set(keyId, key);
  }
  const first = keys.keys().next();
  if (first.done) throw new Error('the keyring is empty');
  return new Keyring(keys, first.value);
}

function b64(buffer: Buffer): string {
  return buffer.toString('base64url');
}

/**
 * The development keyring (`pnpm start`, tests). Production must set `ENCRYPTION_KEYS`; a service
 * refuses to start without it (see `envKeyring`).
 */
export const DEVELOPMENT_KEYRING = `dev1:${Buffer.alloc(32, 7).toString('base64')}`;

/**
 * The `ENCRYPTION_KEYS` variable of every service that seals secrets (tokens, webhook secrets):
 * `kid:<base64 32 bytes>,...`, first key current. Checked at start, so a bad value stops the
 * service with one line naming the variable; the development default exists only in development.
 */
export function envKeyring(mode: AppEnv) {
  return envSecret(mode, DEVELOPMENT_KEYRING).transform((text, ctx) => {
    try {
      return parseKeyring(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
}
