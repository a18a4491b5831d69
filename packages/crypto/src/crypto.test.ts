import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashToken, keyDisplayPrefix, parseKeyring, randomBase62 } from './index.ts';

const k = () => randomBytes(32).toString('base64');

describe('api keys', () => {
  // Guarantee: keys are `svc_live_` + at least 32 base62 characters, stored only as SHA-256.
  it('generates long base62 keys and hashes them deterministically', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^svc_live_[0-9A-Za-z]{40}$/);
    expect(hashToken(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(key)).toBe(hashToken(key));
    expect(keyDisplayPrefix(key)).toBe(key.slice(0, 13));
    expect(randomBase62(100)).toMatch(/^[0-9A-Za-z]{100}$/);
  });
});

describe('keyring', () => {
  // Guarantee: secrets round-trip, and tampering or moving a ciphertext to another owner fails.
  it('seals and opens, bound to its owner', () => {
    const ring = parseKeyring(`a:${k()}`);
    const sealed = ring.encrypt('EAAB-token', 'acc_1');
    expect(sealed).not.toContain('EAAB');
    expect(ring.decrypt(sealed, 'acc_1')).toBe('EAAB-token');
    expect(() => ring.decrypt(sealed, 'acc_2')).toThrow();
    const parts = sealed.split('.');
    parts[4] = Buffer.from('forged').toString('base64url');
    expect(() => ring.decrypt(parts.join('.'), 'acc_1')).toThrow();
  });

  // Guarantee: rotation keeps old ciphertexts readable and flags them for re-encryption.
  it('reads old keys after rotation', () => {
    const oldKey = k();
    const before = parseKeyring(`old:${oldKey}`);
    const sealed = before.encrypt('secret');
    const after = parseKeyring(`new:${k()},old:${oldKey}`);
    expect(after.decrypt(sealed)).toBe('secret');
    expect(after.needsRotation(sealed)).toBe(true);
    expect(after.needsRotation(after.encrypt('secret'))).toBe(false);
  });

  it('refuses bad key material', () => {
    expect(() => parseKeyring('')).toThrow(/empty/);
    expect(() => parseKeyring('a:c2hvcnQ=')).toThrow(/32 bytes/);
  });
});
