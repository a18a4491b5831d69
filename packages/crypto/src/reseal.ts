import type { Keyring } from './keyring.ts';

/** One sealed value as a re-sealing pass sees it: its row's key, the ciphertext, its additional data. */
export interface SealedValue {
  key: string;
  sealed: string;
  aad: string;
}

/**
 * One kind of value a service keeps sealed with the keyring (a column of one of its tables), as
 * `reseal` walks it. The service knows its table and the additional data each value is bound to.
 */
export interface SealedValues {
  /** What the values are, for the report ("network tokens", "webhook secrets"). */
  what: string;
  /** Up to `take` sealed values whose row key comes after `after`, in key order. */
  page(after: string, take: number): Promise<SealedValue[]>;
  /**
   * Writes the re-sealed value if the row still holds the one read, true when it did: a value
   * written meanwhile was sealed with the current key already (or is gone).
   */
  replace(value: SealedValue, resealed: string): Promise<boolean>;
}

export interface ResealReport {
  what: string;
  /** The key everything is now sealed with. */
  keyId: string;
  resealed: number;
  /** Values still under another key after the pass: unreadable, or written by a replica with the old ring. */
  left: number;
}

/**
 * Re-seals every value not under the current key (after a new key was put first in the ring),
 * then counts what is still under another key: the old keys may be dropped only once every kind of
 * value of every service reports 0 left. Idempotent and resumable, safe while the services run.
 */
export async function reseal(keyring: Keyring, values: SealedValues, batchSize = 200): Promise<ResealReport> {
  let resealed = 0;
  await walk(values, batchSize, async (value) => {
    if (!keyring.needsRotation(value.sealed)) return;
    let plain: string;
    try {
      plain = keyring.decrypt(value.sealed, value.aad);
    } catch {
      return; // its key is not in the ring (or it is corrupt): counted as left below
    }
    if (await values.replace(value, keyring.encrypt(plain, value.aad))) resealed++;
  });
  let left = 0;
  await walk(values, batchSize, (value) => {
    if (keyring.needsRotation(value.sealed)) left++;
  });
  return { what: values.what, keyId: keyring.currentKeyId, resealed, left };
}

async function walk(
  values: SealedValues,
  batchSize: number,
  visit: (value: SealedValue) => Promise<void> | void,
): Promise<void> {
  let after = '';
  for (;;) {
    const page = await values.page(after, batchSize);
    for (const value of page) await visit(value);
    const last = page.at(-1);
    if (!last) return;
    after = last.key;
  }
}
