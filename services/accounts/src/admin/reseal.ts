// Accounts' part of `pnpm rotate-keys` (scripts/rotate-keys.ts): re-seals the network tokens and
// the tokens of pending page choices with the current key of ENCRYPTION_KEYS, and prints what it
// did and what is left as one JSON line.
import { reseal } from '@svc/crypto';
import { loadAccountsConfig } from '../config.ts';
import { ConnectStore } from '../connect-store.ts';
import { openDatabase } from '../db.ts';
import { sealedTokens } from '../token-vault.ts';

const { DATABASE_URL, ENCRYPTION_KEYS } = loadAccountsConfig();
const { pool, prisma } = openDatabase(DATABASE_URL);
try {
  const reports = [];
  for (const kind of [sealedTokens(prisma), new ConnectStore(prisma).sealedPageChoices()])
    reports.push(await reseal(ENCRYPTION_KEYS, kind));
  console.log(JSON.stringify(reports));
} finally {
  await prisma.$disconnect();
  await pool.end();
}
