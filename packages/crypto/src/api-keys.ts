import { randomBase62, sha256Hex } from './primitives.ts';

export const API_KEY_PREFIX = 'svc_live_';
export const EMBED_TOKEN_PREFIX = 'sve_';
const SECRET_LENGTH = 40; // ~238 bits of base62

/** A new plain API key. Only its hash is stored; the plain key is shown once. */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomBase62(SECRET_LENGTH)}`;
}

/** A new plain embed session token (`sve_…`); like keys, only its hash is stored. */
export function generateEmbedToken(): string {
  return `${EMBED_TOKEN_PREFIX}${randomBase62(SECRET_LENGTH)}`;
}

/** API keys and embed tokens are stored and looked up by SHA-256: high-entropy, so no salt/KDF needed. */
export function hashToken(token: string): string {
  return sha256Hex(token);
}

/** What a key is listed as: enough to recognise it, far too little to use it. */
export function keyDisplayPrefix(plainKey: string): string {
  return plainKey.slice(0, API_KEY_PREFIX.length + 4);
}
