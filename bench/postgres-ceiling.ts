// The Postgres ceiling the product benches compare against: one transaction of two single-row
// inserts (BEGIN, INSERT, INSERT, COMMIT), from many clients for a few seconds, on the run's own
// database. The inbox and webhooks paths each need at least that per message or event.
import pg from 'pg';

const SCHEMA = 'bench_ceiling';

export async function postgresCeiling(
  databaseUrl: string,
  options: { clients?: number; seconds?: number } = {},
): Promise<number> {
  const { clients: count = 20, seconds = 5 } = options;
  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  await setup.query(`
    CREATE SCHEMA IF NOT EXISTS ${SCHEMA};
    CREATE TABLE IF NOT EXISTS ${SCHEMA}.a (id text PRIMARY KEY, body text NOT NULL, at timestamptz NOT NULL);
    CREATE TABLE IF NOT EXISTS ${SCHEMA}.b (id text PRIMARY KEY, ref text NOT NULL, state text NOT NULL,
      at timestamptz NOT NULL);`);
  await setup.end();
  const clients = await Promise.all(
    Array.from({ length: count }, async () => {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      return client;
    }),
  );
  const body = JSON.stringify({ id: 'evt_ceiling', type: 'bench', data: { text: 'x'.repeat(300) } });
  let transactions = 0;
  const run = Date.now().toString(36);
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    clients.map(async (client, c) => {
      let i = 0;
      while (performance.now() < until) {
        const id = `${run}-${c}-${i++}`;
        await client.query('BEGIN');
        await client.query({
          name: 'ceiling_a',
          text: `INSERT INTO ${SCHEMA}.a VALUES ($1, $2, now())`,
          values: [id, body],
        });
        await client.query({
          name: 'ceiling_b',
          text: `INSERT INTO ${SCHEMA}.b VALUES ($1, $1, 'pending', now())`,
          values: [id],
        });
        await client.query('COMMIT');
        transactions++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(clients.map((client) => client.end()));
  return transactions / elapsed;
}
