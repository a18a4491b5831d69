import { createHmac } from 'node:crypto';
import { hashToken, randomBase62, safeEqual } from '@svc/crypto';
import type { Db } from './db.ts';

/**
 * The OAuth `state`: `<id>.<signature>`. The signature (HMAC with a server secret) refuses a
 * forged state before any lookup; the row makes it single-use and expiring, and binds it to the
 * connect link and network the user started from, and to the browser that started it.
 *
 * The browser binding: start hands the browser a random nonce (in a cookie) and keeps only its
 * hash here; the callback must bring the nonce back. Without it, a consent URL made for one connect
 * link could be sent to someone else, whose Pages would then land in the sender's workspace.
 */
export type StateProblem = 'missing' | 'forged' | 'reused' | 'expired' | 'other_browser';

export class StateError extends Error {
  constructor(readonly problem: StateProblem) {
    super(`OAuth state ${problem}`);
  }
}

const sign = (secret: string, id: string) => createHmac('sha256', secret).update(id).digest('base64url');

interface IssuedState {
  state: string;
  /** For the starting browser's cookie only: the row keeps its hash. */
  browserNonce: string;
}

export async function issueState(
  db: Db,
  secret: string,
  input: { linkId: string; network: string; ttlSeconds: number; now?: Date },
): Promise<IssuedState> {
  const id = randomBase62(24);
  const browserNonce = randomBase62(32);
  const now = input.now ?? new Date();
  await db.oAuthState.create({
    data: {
      id,
      linkId: input.linkId,
      network: input.network,
      browserHash: hashToken(browserNonce),
      expiresAt: new Date(now.getTime() + input.ttlSeconds * 1000),
    },
  });
  return { state: `${id}.${sign(secret, id)}`, browserNonce };
}

/**
 * Marks the state used (atomically, so two callbacks with one state cannot both pass), then checks
 * it came back to the browser that started it. A state presented by another browser is spent too:
 * the code in that callback URL can then never be replayed from the starting browser.
 */
export async function consumeState(
  db: Db,
  secret: string,
  input: { state: string; browserNonce: string },
  now = new Date(),
): Promise<{ linkId: string; network: string }> {
  if (!input.state) throw new StateError('missing');
  const [id, signature] = input.state.split('.');
  if (!id || !signature || !safeEqual(signature, sign(secret, id))) throw new StateError('forged');
  const claimed = await db.oAuthState.updateMany({ where: { id, usedAt: null }, data: { usedAt: now } });
  const row = await db.oAuthState.findUnique({ where: { id } });
  if (!row) throw new StateError('forged');
  if (claimed.count === 0) throw new StateError('reused');
  if (!sameBrowser(row.browserHash, input.browserNonce)) throw new StateError('other_browser');
  if (row.expiresAt <= now) throw new StateError('expired');
  return { linkId: row.linkId, network: row.network };
}

/** A state issued before browsers were bound (no hash) is refused like a foreign one. */
function sameBrowser(storedHash: string | null, nonce: string): boolean {
  if (!storedHash || !nonce) return false;
  return safeEqual(storedHash, hashToken(nonce));
}
