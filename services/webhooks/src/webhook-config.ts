import { type Keyring, randomBase62, type SealedValues } from '@svc/crypto';
import { isUniqueViolation } from '@svc/db';
import { ServiceError } from '@svc/errors';
import type { Resolver } from '@svc/net';
import type { Clock } from './clock.ts';
import type { Db } from './db.ts';
import type { Webhook } from './generated/prisma/client.ts';
import { assertResolvesPublic, parseWebhookUrl } from './network/url-policy.ts';

const SECRET_PREFIX = 'whsec_';

/** 43 base62 characters carry 256 bits: the entropy of 32 random bytes. */
const SECRET_RANDOM_CHARS = 43;

function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBase62(SECRET_RANDOM_CHARS)}`;
}

export interface UrlPolicy {
  allowPrivateNetworks: boolean;
  resolver: Resolver;
}

const noWebhook = () => new ServiceError('not_found', 'no webhook is configured');

/**
 * Creates or replaces the partner's webhook (one per partner). The secret is made here, sealed
 * with the key ring bound to the partner id (a sealed secret moved to another row does not open),
 * and returned in plain only when this call created it or rotated it.
 */
export async function putWebhook(
  db: Db,
  keyring: Keyring,
  clock: Clock,
  policy: UrlPolicy,
  input: { partnerId: string; partnerSlug: string; url: string; rotateSecret: boolean },
): Promise<{ webhook: Webhook; secret: string | null }> {
  const url = parseWebhookUrl(input.url, policy.allowPrivateNetworks);
  if (!policy.allowPrivateNetworks) await assertResolvesPublic(url, policy.resolver);
  const row = { partnerId: input.partnerId, partnerSlug: input.partnerSlug, url: url.href, now: clock.now() };
  // A concurrent PUT may create the row, and a concurrent DELETE remove it, between any two
  // statements: each round decides again from what it finds.
  for (let round = 0; round < 3; round++) {
    const updated = await updateWebhook(db, keyring, row, input.rotateSecret);
    if (updated) return updated;
    const created = await createWebhook(db, keyring, row);
    if (created) return created;
  }
  throw new ServiceError('conflict', 'the webhook was changed by concurrent requests; retry');
}

type WebhookRow = { partnerId: string; partnerSlug: string; url: string; now: Date };

/** The partner's webhook with its new URL (and secret when rotated); null when there is none. */
async function updateWebhook(db: Db, keyring: Keyring, row: WebhookRow, rotate: boolean) {
  const secret = rotate ? generateWebhookSecret() : null;
  const { count } = await db.webhook.updateMany({
    where: { partnerId: row.partnerId },
    data: {
      url: row.url,
      partnerSlug: row.partnerSlug,
      updatedAt: row.now,
      ...(secret ? { secretSealed: keyring.encrypt(secret, row.partnerId) } : {}),
    },
  });
  const webhook = count > 0 ? await db.webhook.findUnique({ where: { partnerId: row.partnerId } }) : null;
  return webhook ? { webhook, secret } : null;
}

/** A new webhook with a new secret; null when another request created one first. */
async function createWebhook(db: Db, keyring: Keyring, row: WebhookRow) {
  const secret = generateWebhookSecret();
  try {
    const webhook = await db.webhook.create({
      data: {
        partnerId: row.partnerId,
        partnerSlug: row.partnerSlug,
        url: row.url,
        secretSealed: keyring.encrypt(secret, row.partnerId),
        createdAt: row.now,
        updatedAt: row.now,
      },
    });
    return { webhook, secret };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return null;
  }
}

export async function getWebhook(db: Db, partnerId: string): Promise<Webhook> {
  const webhook = await db.webhook.findUnique({ where: { partnerId } });
  if (!webhook) throw noWebhook();
  return webhook;
}

/** Deletes the webhook; deliveries still pending end undelivered (they can be redelivered later). */
export async function deleteWebhook(db: Db, clock: Clock, partnerId: string): Promise<void> {
  const now = clock.now();
  await db.$transaction(async (tx) => {
    const { count } = await tx.webhook.deleteMany({ where: { partnerId } });
    if (count === 0) throw noWebhook();
    await tx.delivery.updateMany({
      where: { partnerId, state: 'pending' },
      data: { state: 'undelivered', nextAttemptAt: null, claimToken: null, updatedAt: now },
    });
  });
}

/** Webhook secrets (bound to the partner id), as `pnpm rotate-keys` re-seals them (see `reseal`). */
export function sealedSecrets(db: Db): SealedValues {
  return {
    what: 'webhook secrets',
    async page(after, take) {
      const rows = await db.webhook.findMany({
        where: { partnerId: { gt: after } },
        orderBy: { partnerId: 'asc' },
        take,
      });
      return rows.map((row) => ({ key: row.partnerId, sealed: row.secretSealed, aad: row.partnerId }));
    },
    async replace({ key, sealed }, secretSealed) {
      const { count } = await db.webhook.updateMany({
        where: { partnerId: key, secretSealed: sealed },
        data: { secretSealed },
      });
      return count === 1;
    },
  };
}
