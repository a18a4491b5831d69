import type { IdempotencyClaim } from '@svc/contracts';
import type { Keyring } from '@svc/crypto';
import { randomBase62, sha256Hex } from '@svc/crypto';
import { errors } from '@svc/errors';
import { isId } from '@svc/ids';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import { runScript } from '../redis-script.ts';

/**
 * `Idempotency-Key` on every POST, in one place: a client that retries after a timeout or a lost
 * answer gets the first answer again (same status, same body, `Idempotent-Replayed: true`)
 * instead of a second workspace, key, connect link, media, redelivery or post. A record is keyed
 * on the key, the caller (partner, and workspace for a workspace key) and the path, and remembers
 * a hash of what was asked (query and body): the same key with another request is a 409.
 *
 * Where it lives: Redis, in the gateway. Every POST passes here and nowhere else in common, the
 * records are short-lived (24 h, which Redis expires by itself), and the gateway already fails
 * closed without Redis. Redis keeps them across gateway restarts (deployed with AOF), not across
 * a loss of Redis's data; for the one write that cannot be undone, a post published to a network,
 * publishing also keeps a claim of the same record in Postgres (`posts/idempotency.ts`), in the
 * service that does the write.
 *
 * The stored answer is sealed with the keyring (AES-256-GCM, bound to its record): it may hold
 * personal data, and for `POST /v1/workspaces/:id/keys` it holds the plain key, which must not sit
 * readable in Redis. Only answers that did something are recorded (2xx): a refusal or a failure
 * frees the key, so the corrected retry runs.
 *
 * A workspace's answers are indexed under it (a sorted set of record keys by expiry, trimmed at
 * each write, so it never holds more than the last 24 hours' records): `workspace.deleted` drops
 * them (`forgetWorkspace`) and marks the workspace for the rest of the window, so an answer that
 * completes after the deletion is not kept either.
 */
const WINDOW_MS = 24 * 3_600_000;

/**
 * How long a running request holds its key. Longer than any POST runs (wait=true: 25 s plus a
 * 5 s margin; the webhook test: 25 s); a gateway that dies mid-request frees it after this, and a
 * retry then runs again (for posts, publishing's own claim answers it).
 */
const LEASE_MS = 60_000;

/** The header's value, as checked here and as the OpenAPI document describes it on every POST. */
export const idempotencyKeyHeader = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/)
  .describe(
    'Makes retrying this POST safe: the same key, caller and path within 24 h answers the first ' +
      'answer again (same status and body, header Idempotent-Replayed: true) instead of doing it ' +
      'twice; the same key with another query or body is a 409 conflict. 1-255 printable ASCII characters.',
  );

/**
 * KEYS[1] = record, ARGV[1] = the running record, ARGV[2] = lease ms
 * → nil when claimed for this request, else the existing record (running or done).
 */
const BEGIN = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;

/**
 * KEYS[1] = record, ARGV[1] = this request's running record, ARGV[2] = the answer, ARGV[3] = ttl ms.
 * Only the request that holds the claim writes: after its lease ran out the key may be another's.
 * With KEYS[2] = the workspace's index, KEYS[3] = its deletion mark and ARGV[4] = now (ms): the
 * record is indexed under its workspace, or dropped (the key freed) if the workspace was deleted.
 */
const COMPLETE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if #KEYS == 3 then
  if redis.call('EXISTS', KEYS[3]) == 1 then
    redis.call('DEL', KEYS[1])
    return 0
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[3]), KEYS[1])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

/**
 * KEYS[1] = a workspace's index, KEYS[2] = its deletion mark; ARGV[1] = the mark's ttl ms,
 * ARGV[2] = batch size → how many records were dropped (a full batch: call again).
 */
const FORGET = `
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
local records = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #records > 0 then
  redis.call('DEL', unpack(records))
  redis.call('ZREM', KEYS[1], unpack(records))
end
return #records
`;

/** Records dropped per FORGET call: each call is short, so Redis never stalls on a large workspace. */
const FORGET_BATCH = 500;

/** KEYS[1] = record, ARGV[1] = this request's running record: frees the key if still held. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type StoredRecord =
  | { state: 'running'; fingerprint: string; claim: string }
  | { state: 'done'; fingerprint: string; status: number; sealed: string };

/**
 * One write that may carry an idempotency key (REST's `Idempotency-Key` header, an MCP tool's
 * `idempotency_key` argument): `called` is the path, or `mcp:<tool>`; `asked` is what the call
 * asks beyond it (parsed query and body, an upload's digest).
 */
export interface IdempotentCall {
  key: string | undefined;
  called: string;
  principal: Principal;
  asked: unknown;
  log: { warn(details: object, message: string): void };
}

/** An answer as the client receives it. */
export interface Answer {
  status: number;
  /** The JSON text; empty for 204. */
  text: string;
}

/** What an operation answered, and whether it is a replay (of this record, or of the owning service's claim). */
export interface Performed extends Answer {
  replayed: boolean;
}

/** The record's id (key, caller, and what was called: a path, or an MCP tool) and what was asked, hashed. */
function claimOf(principal: Principal, called: string, key: string, asked: unknown): IdempotencyClaim {
  return {
    key: sha256Hex(JSON.stringify([principal.partnerId, principal.workspaceId ?? '', called, key])),
    requestHash: sha256Hex(JSON.stringify(asked ?? null)),
  };
}

export class Idempotency {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly keyring: Keyring,
  ) {
    redis.defineCommand('idempotencyBegin', { numberOfKeys: 1, lua: BEGIN });
    // The number of keys comes first in each call: 1, or 3 for a workspace's record.
    redis.defineCommand('idempotencyComplete', { lua: COMPLETE });
    redis.defineCommand('idempotencyRelease', { numberOfKeys: 1, lua: RELEASE });
    redis.defineCommand('idempotencyForget', { numberOfKeys: 2, lua: FORGET });
  }

  /**
   * `workspace.deleted`: drops every answer recorded for the workspace (they may hold its
   * messages, posts or keys) and keeps later ones from being recorded for the rest of the window.
   */
  async forgetWorkspace(workspaceId: string): Promise<number> {
    const keys = [this.indexKey(workspaceId), this.deletedKey(workspaceId)];
    let dropped = 0;
    for (;;) {
      const count = Number(
        await this.call('idempotencyForget', [...keys, WINDOW_MS + LEASE_MS, FORGET_BATCH]),
      );
      dropped += count;
      if (count < FORGET_BATCH) return dropped;
    }
  }

  private indexKey(workspaceId: string): string {
    return `${this.prefix}idem-ws:${workspaceId}`;
  }

  private deletedKey(workspaceId: string): string {
    return `${this.prefix}idem-deleted:${workspaceId}`;
  }

  /**
   * Runs `write` once per key, caller and what was called within 24 h; a call without a key just
   * runs. A service that keeps its own claim may answer a retry this record could not (its gateway
   * died before recording, Redis lost it): `write` then says `replayed` too.
   */
  async run(
    call: IdempotentCall,
    write: (claim: IdempotencyClaim | undefined) => Promise<Performed>,
  ): Promise<Performed> {
    const { key, called, principal } = call;
    if (key === undefined) return write(undefined);
    const claim = claimOf(principal, called, key, call.asked);
    const recordKey = `${this.prefix}idem:${claim.key}`;
    const running = JSON.stringify({
      state: 'running',
      fingerprint: claim.requestHash,
      claim: randomBase62(16),
    } satisfies StoredRecord);
    const startedAt = Date.now();
    const existing = (await this.call('idempotencyBegin', [recordKey, running, LEASE_MS])) as string | null;
    if (existing !== null) return { ...this.replay(recordKey, existing, claim.requestHash), replayed: true };
    let answer: Performed;
    try {
      answer = await write(claim);
    } catch (error) {
      await this.call('idempotencyRelease', [recordKey, running]).catch(() => {});
      throw error;
    }
    const done = JSON.stringify({
      state: 'done',
      fingerprint: claim.requestHash,
      status: answer.status,
      sealed: this.keyring.encrypt(answer.text, recordKey),
    } satisfies StoredRecord);
    const ttlMs = Math.max(1, WINDOW_MS - (Date.now() - startedAt));
    const workspace = workspaceOfAnswer(principal, called, answer.text);
    const keys = workspace ? [recordKey, this.indexKey(workspace), this.deletedKey(workspace)] : [recordKey];
    // The write happened: its answer goes out even if recording it fails (the lease then frees the key).
    await this.call('idempotencyComplete', [keys.length, ...keys, running, done, ttlMs, Date.now()]).catch(
      (error) => call.log.warn({ err: error }, 'could not record the idempotent answer'),
    );
    return answer;
  }

  /** The recorded answer to this request, or why there is none to give. */
  private replay(recordKey: string, text: string, requestHash: string): Answer {
    const record = JSON.parse(text) as StoredRecord;
    if (record.fingerprint !== requestHash)
      throw errors.conflict('this Idempotency-Key was used for a different request');
    if (record.state === 'running')
      throw errors.conflict('a request with this Idempotency-Key is still in progress; retry shortly');
    try {
      return { status: record.status, text: this.keyring.decrypt(record.sealed, recordKey) };
    } catch {
      // Sealed under a key since removed from ENCRYPTION_KEYS: never run the request twice.
      throw errors.conflict(
        'the answer recorded under this Idempotency-Key can no longer be read; send a new key',
      );
    }
  }

  private call(command: string, args: (string | number)[]): Promise<unknown> {
    // Without the records a retry could run twice, so no record means no request.
    return runScript(
      this.redis,
      command,
      args,
      'idempotency records are unavailable (Redis is not answering); try again shortly',
    );
  }
}

/**
 * The workspace a recorded answer belongs to: the workspace key's or embed session's own, else the
 * one the path names (`/v1/workspaces/:id/...`), else the one the answer names (the `workspace` of
 * a post, media, message, account or embed session; the `id` of a new workspace). Undefined for
 * the partner's own records (a webhook test, a redelivery).
 */
function workspaceOfAnswer(principal: Principal, path: string, text: string): string | undefined {
  if (principal.workspaceId) return principal.workspaceId;
  const named = path.split('/')[3];
  if (path.startsWith('/v1/workspaces/') && isId('workspace', named)) return named;
  let answer: unknown;
  try {
    answer = text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { workspace, id } = answer as { workspace?: unknown; id?: unknown };
  if (isId('workspace', workspace)) return workspace;
  if (path === '/v1/workspaces' && isId('workspace', id)) return id;
  return undefined;
}

/** The request's `Idempotency-Key`, or undefined without one; a malformed one is a 400. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (!idempotencyKeyHeader.safeParse(key).success)
    throw errors.validation('Idempotency-Key', 'Idempotency-Key must be 1-255 printable ASCII characters');
  return key as string;
}
