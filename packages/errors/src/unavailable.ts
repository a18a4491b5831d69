/**
 * Whether an unexpected error says that a database cannot be reached right now rather than that
 * something is wrong with the request or the code: Postgres restarting or shutting down, a
 * connection cut, a pool that could not connect in time. A request that meets one answers
 * `service_unavailable` (503, retryable) instead of `internal_error` (500). It looks through the
 * wrappers the error may come in: `cause`, an AggregateError's `errors` (a refused connect tried
 * on each address), and Prisma's driver adapter error (`meta.driverAdapterError.cause`).
 */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const candidate = error as {
    code?: unknown;
    originalCode?: unknown;
    kind?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    meta?: { driverAdapterError?: unknown };
  };
  const codes = [candidate.code, candidate.originalCode].filter((c): c is string => typeof c === 'string');
  if (codes.some((code) => UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_CODES.has(code))) return true;
  if (typeof candidate.kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(candidate.kind)) return true;
  const message = typeof candidate.message === 'string' ? candidate.message : '';
  if (UNAVAILABLE_MESSAGES.some((words) => message.includes(words))) return true;
  const inner = [candidate.cause, candidate.meta?.driverAdapterError];
  if (Array.isArray(candidate.errors)) inner.push(...candidate.errors);
  return inner.some((e) => isUnavailable(e, depth + 1));
}

/**
 * SQLSTATE class 08 (connection exception), 57P01-57P03 (the server is shutting down, crashed, or
 * cannot accept connections yet), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;

/** Node's socket errors, and Prisma's "cannot reach / connection closed / pool timeout" codes. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'P1001',
  'P1002',
  'P1017',
  'P2024',
]);

/** @prisma/driver-adapter-utils' kinds for the same conditions. */
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

/**
 * pg's own wording (no code) for a connection that ended, or a pool that could not connect in
 * time; Prisma quotes it inside its own message.
 */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];
