// The database of one bench run, cloned from a migrated template kept between runs.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureDatabase, migrateAll } from '../scripts/migrate.ts';
import { envVar, ROOT } from './child.ts';

export const SERVER_URL = envVar('BENCH_DATABASE_SERVER', 'postgresql://postgres@127.0.0.1:5432/postgres');
const TEMPLATE_PREFIX = 'bench_template_';

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function databaseUrlOf(name: string): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One statement on the server's maintenance database. */
export async function serverQuery<Row extends pg.QueryResultRow>(sql: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A fresh database with every service's migrations applied. Applying them with the Prisma CLI
 * (`pnpm migrate`, scripts/migrate.ts) takes about ten seconds here, so the migrated result is kept
 * as `bench_template_<hash of the migrations>` on the local server and cloned until a migration
 * changes (templates of older migrations are dropped then).
 */
export async function createBenchDatabase(name: string, say: (line: string) => void): Promise<BenchDatabase> {
  const template = `${TEMPLATE_PREFIX}${migrationsHash()}`;
  const exists = await serverQuery('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
  if (exists.length === 0) {
    say(`migrating a new template database ${template} (once per change of the migrations) …`);
    await buildTemplate(template, `${TEMPLATE_PREFIX}building_${name}`);
  }
  await serverQuery(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  return {
    name,
    url: databaseUrlOf(name),
    drop: async () => {
      await serverQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const service of readdirSync(path.join(ROOT, 'services')).sort()) {
    const dir = path.join(ROOT, 'services', service, 'prisma/migrations');
    if (!existsSync(dir)) continue;
    for (const migration of readdirSync(dir).sort()) {
      const file = path.join(dir, migration, 'migration.sql');
      if (existsSync(file)) hash.update(`${service}/${migration}\n`).update(readFileSync(file));
    }
  }
  return hash.digest('hex').slice(0, 12);
}

async function buildTemplate(template: string, building: string): Promise<void> {
  process.env.DATABASE_URL = databaseUrlOf(building);
  await ensureDatabase(databaseUrlOf(building));
  const log = console.log;
  console.log = () => {}; // migrateAll reports each service on stdout; stdout carries only results
  try {
    await migrateAll();
  } catch (error) {
    await serverQuery(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    throw error;
  } finally {
    console.log = log;
  }
  const stale = await serverQuery<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname NOT LIKE $2',
    [`${TEMPLATE_PREFIX}%`, `${TEMPLATE_PREFIX}building_%`],
  );
  for (const { datname } of stale)
    await serverQuery(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
  // Another run may have finished the same template meanwhile: then ours is dropped.
  await serverQuery(`ALTER DATABASE "${building}" RENAME TO "${template}"`).catch(async () => {
    await serverQuery(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
  });
}
