import { randomBase62 } from '@svc/crypto';

/**
 * Opaque, prefixed, sortable ids: `<prefix>_<time><random>`. The time part is the creation
 * millisecond in 9 base62 digits whose alphabet is in ASCII order, so ids sort by creation time;
 * 16 random base62 digits (~95 bits) make them unguessable. One table names every prefix.
 */
export const ID_PREFIXES = {
  partner: 'ptn',
  workspace: 'ws',
  apiKey: 'key',
  event: 'evt',
  account: 'acc',
  connectLink: 'cl',
  post: 'post',
  media: 'med',
  upload: 'upl',
  conversation: 'conv',
  message: 'msg',
  embedSession: 'emb',
  delivery: 'dlv',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
export type Id<K extends IdKind> = `${(typeof ID_PREFIXES)[K]}_${string}`;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TIME_DIGITS = 9;

export function newId<K extends IdKind>(kind: K, now: number = Date.now()): Id<K> {
  return `${ID_PREFIXES[kind]}_${encodeTime(now)}${randomBase62(16)}` as Id<K>;
}

/** True when `value` looks like an id of that kind; used to refuse bad ids before any lookup. */
const ID_PATTERNS = Object.fromEntries(
  Object.entries(ID_PREFIXES).map(([kind, prefix]) => [kind, new RegExp(`^${prefix}_[0-9A-Za-z]{25}$`)]),
) as Record<IdKind, RegExp>;

export function isId<K extends IdKind>(kind: K, value: unknown): value is Id<K> {
  return typeof value === 'string' && ID_PATTERNS[kind].test(value);
}

function encodeTime(ms: number): string {
  let rest = Math.floor(ms);
  let out = '';
  for (let i = 0; i < TIME_DIGITS; i++) {
    out = ALPHABET.charAt(rest % 62) + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}
