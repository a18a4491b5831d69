import { createHmac } from 'node:crypto';
import { randomBase62, safeEqual } from '@svc/crypto';
import type { Db } from './db.ts';

/**
 * The OAuth `state`: `<id>.<signature>`. The signature (HMAC with a server secret) refuses a
 * forged state before any lookup; the row makes it single-use and expiring, and binds it to the
 * connect link and network the user started from.
 */
export type StateProblem = 'missing' | 'forged' | 'reused' | 'expired';

export class StateError extends Error {
  constructor(readonly problem: StateProblem) {
    super(`OAuth state ${problem}`);
  }
}

const sign = (secret: string, id: string) => createHmac('sha256', secret).update(id).digest('base64url');

export async function issueState(
  db: Db,
  secret: string,
  input: { linkId: string; network: string; ttlSeconds: number; now?: Date },
): Promise<string> {
  const id = randomBase62(24);
  const now = input.now ?? new Date();
  await db.oAuthState.create({
    data: {
      id,
      linkId: input.linkId,
      network: input.network,
      expiresAt: new Date(now.getTime() + input.ttlSeconds * 1000),
    },
  });
  return `${id}.${sign(secret, id)}`;
}

/** Marks the state used (atomically, so two callbacks with one state cannot both pass). */
export async function consumeState(
  db: Db,
  secret: string,
  state: string,
  now = new Date(),
): Promise<{ linkId: string; network: string }> {
  if (!state) throw new StateError('missing');
  const [id, signature] = state.split('.');
  if (!id || !signature || !safeEqual(signature, sign(secret, id))) throw new StateError('forged');
  const claimed = await db.oAuthState.updateMany({ where: { id, usedAt: null }, data: { usedAt: now } });
  const row = await db.oAuthState.findUnique({ where: { id } });
  if (!row) throw new StateError('forged');
  if (claimed.count === 0) throw new StateError('reused');
  if (row.expiresAt <= now) throw new StateError('expired');
  return { linkId: row.linkId, network: row.network };
}
