// Baseline (b): the minimal hand-built version of the product's GET /v1/workspaces/:id path:
//   Fastify route → SHA-256 of the bearer token → one Redis EVALSHA (GET principal + INCR counter)
//   → one grpc-js unary call (hand-written service, JSON serializer) → in the gRPC server one `pg`
//   named prepared statement primary-key SELECT from a table in a temp schema.
// The HTTP server and the gRPC server share this one process, as gateway and identity do in
// bench/stack.ts, so both targets are laid out the same way.
import { createHash, randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import { announce, envVar, onShutdown, requireEnv } from './child.ts';

const databaseUrl = requireEnv('DATABASE_URL');
const prefix = requireEnv('REDIS_PREFIX');
const schema = 'bench_minimal';

interface Row {
  id: string;
  partner_id: string;
  name: string;
  timezone: string;
  settings: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

interface GetRequest {
  id: string;
  partnerId: string;
}

interface GetResponse {
  workspace: {
    id: string;
    name: string;
    timezone: string;
    settings: Record<string, unknown>;
    created: string;
    updated: string;
  } | null;
}

// --- data: a temp schema with one row, and the token's principal in Redis -------------------------
const token = `svc_live_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')}`;
const tokenHash = createHash('sha256').update(token).digest('hex');
const partnerId = `partner_${randomBytes(8).toString('hex')}`;
const workspaceId = `ws_${randomBytes(8).toString('hex')}`;

const setup = new pg.Client({ connectionString: databaseUrl });
await setup.connect();
await setup.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await setup.query(`CREATE SCHEMA ${schema}`);
await setup.query(`CREATE TABLE ${schema}.workspaces (
  id text PRIMARY KEY, partner_id text NOT NULL, name text NOT NULL, timezone text NOT NULL,
  settings jsonb NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL)`);
await setup.query(`INSERT INTO ${schema}.workspaces VALUES ($1, $2, 'bench', 'UTC', '{}', now(), now())`, [
  workspaceId,
  partnerId,
]);
await setup.end();

const redis = new Redis(envVar('REDIS_URL', 'redis://127.0.0.1:6379'), { maxRetriesPerRequest: 1 });
await redis.set(
  `${prefix}min:auth:${tokenHash}`,
  JSON.stringify({ partner_id: partnerId, limit: 10_000_000 }),
);
// A tiny script: read the cached principal and count the request. ioredis sends it with EVALSHA.
redis.defineCommand('authAndCount', {
  numberOfKeys: 2,
  lua: `local p = redis.call('GET', KEYS[1])
if not p then return nil end
local n = redis.call('INCR', KEYS[2])
return { p, n }`,
});
const authAndCount = (
  redis as unknown as Record<string, (...args: string[]) => Promise<[string, number] | null>>
).authAndCount;
if (!authAndCount) throw new Error('authAndCount was not defined');
const runScript = authAndCount.bind(redis);

// --- gRPC server: one named prepared statement per call -------------------------------------------
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: <T>(buffer: Buffer) => JSON.parse(buffer.toString('utf8')) as T,
};
const METHOD = '/bench.Minimal/GetWorkspace';
const service: grpc.ServiceDefinition = {
  GetWorkspace: {
    path: METHOD,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: (b: Buffer) => json.deserialize<GetRequest>(b),
    responseSerialize: json.serialize,
    responseDeserialize: (b: Buffer) => json.deserialize<GetResponse>(b),
  },
};
const server = new grpc.Server();
server.addService(service, {
  GetWorkspace: (
    call: grpc.ServerUnaryCall<GetRequest, GetResponse>,
    callback: grpc.sendUnaryData<GetResponse>,
  ) => {
    pool
      .query<Row>({
        name: 'workspace_by_id',
        text: `SELECT id, partner_id, name, timezone, settings, created_at, updated_at FROM ${schema}.workspaces WHERE id = $1`,
        values: [call.request.id],
      })
      .then(({ rows: [row] }) => {
        const workspace =
          row && row.partner_id === call.request.partnerId
            ? {
                id: row.id,
                name: row.name,
                timezone: row.timezone,
                settings: row.settings,
                created: row.created_at.toISOString(),
                updated: row.updated_at.toISOString(),
              }
            : null;
        callback(null, { workspace });
      })
      .catch((error: unknown) => callback({ code: grpc.status.INTERNAL, details: String(error) }));
  },
});
const grpcPort = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) =>
    error ? reject(error) : resolve(port),
  ),
);
const client = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
const getWorkspace = (request: GetRequest) =>
  new Promise<GetResponse>((resolve, reject) =>
    client.makeUnaryRequest<GetRequest, GetResponse>(
      METHOD,
      json.serialize,
      (b) => json.deserialize<GetResponse>(b),
      request,
      (error, response) =>
        error || !response ? reject(error ?? new Error('empty response')) : resolve(response),
    ),
  );

// --- HTTP ------------------------------------------------------------------------------------------
const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;
const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/v1/workspaces/:id', async (request, reply) => {
  const bearer = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (!bearer) return reply.code(401).send({ error: { code: 'unauthorized', message: 'missing token' } });
  const hash = createHash('sha256').update(bearer).digest('hex');
  const cached = await runScript(`${prefix}min:auth:${hash}`, `${prefix}min:count:${hash}`);
  if (!cached) return reply.code(401).send({ error: { code: 'unauthorized', message: 'unknown token' } });
  const principal = JSON.parse(cached[0]) as { partner_id: string };
  const { workspace } = await getWorkspace({ id: request.params.id, partnerId: principal.partner_id });
  if (!workspace)
    return reply.code(404).send({ error: { code: 'not_found', message: 'workspace not found' } });
  return workspace;
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });

onShutdown(async () => {
  await app.close();
  client.close();
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  redis.disconnect();
  await pool.end();
});
announce({
  url,
  path: `/v1/workspaces/${workspaceId}`,
  token,
  processes: 'one process (HTTP + gRPC server)',
});
