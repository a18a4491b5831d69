import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateAll, servicesWithMigrations } from '../../../scripts/migrate.ts';
import { adminQuery, TEST_DATABASE_PREFIX, templateDatabase, testDatabaseUrl } from './database.ts';

const root = path.resolve(import.meta.dirname, '../../..');
const run = `${Math.floor(Date.now() / 1000)}_${randomBytes(3).toString('hex')}`;

/**
 * Runs once before the suite: builds this run's template database with every service's migrations
 * applied (through the same `prisma migrate deploy` production uses), so each test file clones a
 * fresh, isolated database from it in milliseconds.
 */
export async function setup(project: TestProject): Promise<void> {
  await dropDatabases((name) => runStartedSeconds(name) < Date.now() / 1000 - 3600);
  await adminQuery(`CREATE DATABASE ${templateDatabase(run)}`);
  await migrateAll(testDatabaseUrl(templateDatabase(run)), true);
  project.provide('testRun', run);
}

export async function teardown(): Promise<void> {
  await dropDatabases((name) => name.startsWith(`${TEST_DATABASE_PREFIX}${run}_`));
}

/**
 * Every service's migration files run in order straight through one connection: the same tables
 * in well under a second, where the five Prisma processes take ten seconds or more on a busy machine. For a
 * throwaway server (the fault suite's), which needs the schema, not Prisma's bookkeeping.
 */
export async function applyMigrationFiles(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const service of servicesWithMigrations()) {
      const dir = path.join(root, 'services', service, 'prisma/migrations');
      // Each service's tables live in the schema named after it (its URL's `schema` for Prisma).
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${service}"; SET search_path TO "${service}"`);
      for (const migration of readdirSync(dir)
        .filter((name) => /^\d/.test(name))
        .sort())
        await client.query(readFileSync(path.join(dir, migration, 'migration.sql'), 'utf8'));
    }
  } finally {
    await client.end();
  }
}

function runStartedSeconds(name: string): number {
  return Number(name.slice(TEST_DATABASE_PREFIX.length).split('_')[0]) || 0;
}

async function dropDatabases(select: (name: string) => boolean): Promise<void> {
  const rows = await adminQuery<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE '${TEST_DATABASE_PREFIX}%'`,
  );
  for (const { datname } of rows.filter((r) => select(r.datname))) {
    await adminQuery(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  }
}
