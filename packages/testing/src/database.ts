import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const TEST_DATABASE_PREFIX = 'svc_test_';
export const TEMPLATE_DATABASE = `${TEST_DATABASE_PREFIX}template`;

const serverUrl = new URL(
  process.env.TEST_DATABASE_SERVER ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
);

export function testDatabaseUrl(database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  sql: string,
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: serverUrl.toString() });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A fresh database cloned from the migrated template; each test file gets its own. */
export async function createTestDatabase(): Promise<string> {
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  return testDatabaseUrl(name);
}
