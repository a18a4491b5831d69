// Applies every service's Prisma migrations (`pnpm migrate`), creating the database if needed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { databaseUrl } from './lib/database.ts';

const root = path.resolve(import.meta.dirname, '..');

export async function ensureDatabase(url = databaseUrl()): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '')}"`);
  } finally {
    await client.end();
  }
}

export async function migrateAll(): Promise<void> {
  await ensureDatabase();
  for (const service of readdirSync(path.join(root, 'services'))) {
    const dir = path.join(root, 'services', service);
    if (!existsSync(path.join(dir, 'prisma/migrations'))) continue;
    const result = spawnSync(
      path.join(root, 'node_modules/.bin/tsx'),
      [path.join(root, 'scripts/prisma.ts'), 'migrate', 'deploy'],
      {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, DATABASE_URL: databaseUrl() },
      },
    );
    if (result.status !== 0) throw new Error(`migrations of ${service} failed`);
    console.log(`✓ migrations applied: ${service}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  migrateAll().catch((error: unknown) => {
    console.error(String(error));
    process.exit(1);
  });
}
