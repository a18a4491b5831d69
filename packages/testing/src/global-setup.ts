import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
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
  applyMigrations(testDatabaseUrl(templateDatabase(run)));
  project.provide('testRun', run);
}

/** Every service's migrations applied to this database, as production applies them. */
export function applyMigrations(databaseUrl: string): void {
  for (const service of servicesWithMigrations()) {
    execFileSync(
      path.join(root, 'node_modules/.bin/tsx'),
      [path.join(root, 'scripts/prisma.ts'), 'migrate', 'deploy'],
      {
        cwd: path.join(root, 'services', service),
        env: { ...process.env, DATABASE_URL: databaseUrl },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
}

export async function teardown(): Promise<void> {
  await dropDatabases((name) => name.startsWith(`${TEST_DATABASE_PREFIX}${run}_`));
}

function servicesWithMigrations(): string[] {
  return readdirSync(path.join(root, 'services')).filter((name) =>
    existsSync(path.join(root, 'services', name, 'prisma/migrations')),
  );
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
