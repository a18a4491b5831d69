import { PrismaPg } from '@prisma/adapter-pg';
import { errors } from '@svc/errors';
import { createLogger, type Logger } from '@svc/logging';
import pg from 'pg';

/**
 * Each service owns one Postgres schema. One pg pool per service serves both its Prisma client
 * (through the driver adapter) and the few raw-SQL paths (outbox relay, SKIP LOCKED claims, hot
 * reads with named prepared statements). `search_path` pins unqualified SQL to the schema.
 *
 * A named statement is planned once per connection (`plan_cache_mode`): only statements whose
 * best plan does not depend on their values are named (a primary key, arrays of keys, a queue's
 * index). Left to choose, Postgres planned the batch statements again on almost every call (their
 * arrays' lengths vary), which cost as much CPU as running them. Prisma's statements are unnamed
 * and planned for their values, as before.
 */
export function createPool(
  databaseUrl: string,
  schema: string,
  max = 10,
  logger: Pick<Logger, 'warn'> = createLogger(schema),
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    options: `-c search_path=${schema} -c plan_cache_mode=force_generic_plan`,
    connectionTimeoutMillis: 5_000,
  });
  // A client whose server went away (a Postgres restart: 57P01, "Connection terminated
  // unexpectedly") emits 'error', and an unheard 'error' event ends the process. The pool listens
  // only while a client is idle (and then re-emits it here); a client lent to a query, a
  // transaction or Prisma's adapter has no listener, so each gets one for its whole life. Its
  // query fails with the error (answered 503, see @svc/errors' isUnavailable), the pool discards
  // the broken client when it comes back, and the next query opens a new connection.
  pool.on('connect', (client) =>
    client.on('error', (err) => logger.warn({ err: err.message, schema }, 'Postgres connection lost')),
  );
  pool.on('error', () => {}); // the idle client's error, already reported by its own listener
  return pool;
}

/**
 * Runs `work` in one transaction on a pooled client: committed if it resolves, rolled back if it
 * throws. For the raw-SQL paths; Prisma's own `$transaction` serves the rest.
 */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection that could not even roll back is destroyed rather than handed to the next caller.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

export function prismaAdapter(pool: pg.Pool, schema: string): PrismaPg {
  return new PrismaPg(pool, { schema });
}

/**
 * `$transaction` options for reads that must agree, as a page and its total must: all of them see
 * one snapshot of the database, whatever commits meanwhile. (Counted beside the page on another
 * connection, a total could include a row committed between the two reads and found on no page,
 * and a client reading pages until they add up to the total would never finish.)
 */
export const ONE_SNAPSHOT = { isolationLevel: 'RepeatableRead' } as const;

/** Page/limit to offset, with the spec's defaults (page 1, limit 50, max 200). */
export function pageWindow(page: number, limit: number): { skip: number; take: number } {
  const take = limit > 0 ? Math.min(limit, 200) : 50;
  const current = page > 0 ? page : 1;
  return { skip: (current - 1) * take, take };
}

/** True when `error` is a unique-constraint violation (Postgres 23505), from pg or Prisma. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as {
    code?: string;
    cause?: unknown;
    meta?: { driverAdapterError?: { cause?: { originalCode?: string } } };
  };
  if (candidate.code === '23505' || candidate.code === 'P2002') return true;
  return candidate.meta?.driverAdapterError?.cause?.originalCode === '23505';
}

/** Turns a missing row into the spec's not_found. */
export function found<T>(row: T | null | undefined, what: string): T {
  if (row === null || row === undefined) throw errors.notFound(what);
  return row;
}

export { GroupCommit } from './group-commit.ts';

/** Who asks, as the gateway resolved it from the API key (empty workspaceId: a partner key). */
export interface Caller {
  partnerId: string;
  workspaceId: string;
}

/**
 * The row filter of a caller's scope: the partner's objects, and for a workspace key only its
 * workspace's. Another scope's object is then simply not found (404), as the spec asks.
 */
export const visibleTo = (caller: Caller) => ({
  partnerId: caller.partnerId,
  ...(caller.workspaceId ? { workspaceId: caller.workspaceId } : {}),
});

/** The same scope as `visibleTo`, checked on an object already in memory. */
export const inScope = (caller: Caller, owned: { partnerId: string; workspaceId: string }): boolean =>
  owned.partnerId === caller.partnerId && (!caller.workspaceId || owned.workspaceId === caller.workspaceId);

export { type Fields, prefixedFields, selectList } from './columns.ts';
