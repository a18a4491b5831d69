import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { adminQuery, TEMPLATE_DATABASE, TEST_DATABASE_PREFIX, testDatabaseUrl } from './database.ts';

const root = path.resolve(import.meta.dirname, '../../..');

/**
 * Runs once before the suite: builds a template database with every service's migrations applied
 * (through the same `prisma migrate deploy` production uses), so each test file can clone a fresh,
 * isolated database from it in milliseconds. Databases of earlier runs are dropped first.
 */
export async function setup(): Promise<void> {
  await dropTestDatabases();
  await adminQuery(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  for (const service of servicesWithMigrations()) {
    execFileSync(
      path.join(root, 'node_modules/.bin/tsx'),
      [path.join(root, 'scripts/prisma.ts'), 'migrate', 'deploy'],
      {
        cwd: path.join(root, 'services', service),
        env: { ...process.env, DATABASE_URL: testDatabaseUrl(TEMPLATE_DATABASE) },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
}

export async function teardown(): Promise<void> {
  await dropTestDatabases();
}

function servicesWithMigrations(): string[] {
  return readdirSync(path.join(root, 'services')).filter((name) =>
    existsSync(path.join(root, 'services', name, 'prisma/migrations')),
  );
}

async function dropTestDatabases(): Promise<void> {
  const rows = await adminQuery<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE '${TEST_DATABASE_PREFIX}%'`,
  );
  for (const { datname } of rows) await adminQuery(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
}
