// Applies every service's Prisma migrations (`pnpm migrate`), creating the database if needed.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { databaseUrl } from './lib/database.ts';
import { deployMigrations } from './lib/prisma-cli.ts';

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

/**
 * Every service's migrations, through `prisma migrate deploy` as production applies them, one
 * service after another (Prisma's advisory lock is one per database).
 */
export async function migrateAll(url = databaseUrl(), quiet = false): Promise<void> {
  await ensureDatabase(url);
  for (const service of servicesWithMigrations()) {
    await deployMigrations(path.join(root, 'services', service), url);
    if (!quiet) console.log(`✓ migrations applied: ${service}`);
  }
}

export function servicesWithMigrations(): string[] {
  return readdirSync(path.join(root, 'services')).filter((name) =>
    existsSync(path.join(root, 'services', name, 'prisma/migrations')),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  migrateAll().catch((error: unknown) => {
    console.error(String(error));
    process.exit(1);
  });
}
