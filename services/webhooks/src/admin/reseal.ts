// Webhooks' part of `pnpm rotate-keys` (scripts/rotate-keys.ts): re-seals the webhook secrets with
// the current key of ENCRYPTION_KEYS, and prints what it did and what is left as one JSON line.
import { reseal } from '@svc/crypto';
import { loadWebhooksConfig } from '../config.ts';
import { openDatabase } from '../db.ts';
import { sealedSecrets } from '../webhook-config.ts';

const { DATABASE_URL, ENCRYPTION_KEYS } = loadWebhooksConfig();
const { pool, prisma } = openDatabase(DATABASE_URL);
try {
  console.log(JSON.stringify([await reseal(ENCRYPTION_KEYS, sealedSecrets(prisma))]));
} finally {
  await prisma.$disconnect();
  await pool.end();
}
