// `pnpm rotate-keys`: after putting a new key first in ENCRYPTION_KEYS (keeping the old ones after
// it) and restarting every service with that ring, re-seals everything sealed with the keyring, in
// every service that holds some (each service's src/admin/reseal.ts: accounts' network tokens,
// webhooks' secrets, ...). Safe to run while the services run and to run again. It reports what
// each re-sealed and what is still under an old key, and exits 1 until nothing is: only then may
// the old keys be dropped from ENCRYPTION_KEYS.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const ENTRY = 'src/admin/reseal.ts';

/** What each entry prints: one JSON array of @svc/crypto's `ResealReport`, one per kind of value. */
interface ResealReport {
  what: string;
  keyId: string;
  resealed: number;
  left: number;
}

let left = 0;
const keyIds = new Set<string>();
for (const service of readdirSync(path.join(root, 'services'))) {
  const entry = path.join(root, 'services', service, ENTRY);
  if (!existsSync(entry)) continue;
  const result = spawnSync(path.join(root, 'node_modules/.bin/tsx'), [entry], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) {
    console.error(`✗ ${service}: re-sealing failed (exit ${result.status}); nothing after it was run`);
    process.exit(1);
  }
  const reports = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '[]') as ResealReport[];
  for (const report of reports) {
    console.log(
      `${service}: ${report.resealed} ${report.what} re-sealed, ${report.left} left under an old key`,
    );
    left += report.left;
    keyIds.add(report.keyId);
  }
}
if (keyIds.size > 1) {
  console.error(
    `✗ the services sealed with different current keys (${[...keyIds].join(', ')}): check ENCRYPTION_KEYS`,
  );
  process.exit(1);
}
if (left > 0) {
  console.error(
    `✗ ${left} value(s) still under an old key: restart every replica with the new ENCRYPTION_KEYS and run this again (keys missing from the ring cannot be read)`,
  );
  process.exit(1);
}
console.log(
  `✓ everything is sealed with key "${[...keyIds][0]}": the old keys can be dropped from ENCRYPTION_KEYS`,
);
