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

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/**
 * The tables Postgres would read whole (a sequential scan) to run `statement`, from its
 * `EXPLAIN (FORMAT JSON)`: how a test shows a batch statement costs its batch, not its table.
 */
export async function tablesReadWhole(
  client: pg.ClientBase,
  statement: string,
  values: unknown[] = [],
): Promise<string[]> {
  const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${statement}`,
    values,
  );
  const scanned = (node: PlanNode): string[] => [
    ...(node['Node Type'] === 'Seq Scan' ? [node['Relation Name'] ?? '?'] : []),
    ...(node.Plans ?? []).flatMap(scanned),
  ];
  const plan = rows[0]?.['QUERY PLAN'][0].Plan;
  if (!plan) throw new Error(`no plan for ${statement}`);
  return scanned(plan);
}
