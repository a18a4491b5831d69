import pg from 'pg';

/**
 * Test databases are named `svc_test_<run>_<suffix>`, where <run> starts with the run's start time
 * in seconds: concurrent runs never touch each other's databases, and a run cleans up leftovers of
 * crashed runs older than an hour.
 */
export const TEST_DATABASE_PREFIX = 'svc_test_';

const serverUrl = new URL(
  process.env.TEST_DATABASE_SERVER ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
);

export function testDatabaseUrl(database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export function templateDatabase(run: string): string {
  return `${TEST_DATABASE_PREFIX}${run}_template`;
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
