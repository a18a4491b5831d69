// `pnpm rotate-tokens`: after putting a new key first in ENCRYPTION_KEYS (keeping the old ones
// after it), re-seals every stored network token with the new key. Safe to run while the service
// runs and to run again; once it reports 0, the old keys can be removed from the ring.
import { loadAccountsConfig } from '../config.ts';
import { openDatabase } from '../db.ts';
import { rotateTokens } from '../vault.ts';

const config = loadAccountsConfig();
const { pool, prisma } = openDatabase(config.DATABASE_URL);
try {
  const rotated = await rotateTokens(prisma, config.ENCRYPTION_KEYS);
  console.log(`re-encrypted ${rotated} token(s) with key "${config.ENCRYPTION_KEYS.currentKeyId}"`);
} finally {
  await prisma.$disconnect();
  await pool.end();
}
