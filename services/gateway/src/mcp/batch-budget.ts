import { retryAfterSeconds } from '../auth/authenticate.ts';
import type { Limiter } from '../auth/limiter.ts';
import type { McpCaller } from './auth.ts';
import { type JsonAnswer, MAX_BATCH } from './json-exchange.ts';

type RequestId = string | number;

/** A JSON-RPC request of a batch: a message with a method and an id (notifications have none). */
function requestIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { method, id } = message as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** JSON-RPC's range for implementation-defined server errors; this one means "over the rate limit". */
const RATE_LIMITED = -32029;

/**
 * A batch is charged like the REST requests it stands for: one unit per JSON-RPC request, against
 * the key's own window (the HTTP request's authentication took the first). The calls the budget
 * does not cover are not run; each is answered with a JSON-RPC error carrying the retry time, so
 * a client can retry exactly those.
 */
export class BatchBudget {
  private readonly refusals = new Map<RequestId, unknown>();

  private constructor(readonly body: unknown) {}

  /** What of `body` the caller's budget covers; a single message costs nothing more. */
  static async charge(body: unknown, caller: McpCaller, limiter: Limiter): Promise<BatchBudget> {
    // A batch over the size limit is refused whole by the exchange: nothing to charge for it.
    if (!Array.isArray(body) || body.length > MAX_BATCH) return new BatchBudget(body);
    const ids = [...new Set(body.map(requestIdOf).filter((id) => id !== undefined))];
    if (ids.length <= 1) return new BatchBudget(body);
    const taken = await limiter.takeFromKey(caller.key.keyId, caller.perMinute, ids.length - 1);
    const covered = new Set(ids.slice(0, 1 + taken.fitting));
    const budget = new BatchBudget(
      body.filter((message) => {
        const id = requestIdOf(message);
        return id === undefined || covered.has(id);
      }),
    );
    const seconds = retryAfterSeconds(taken);
    for (const id of ids.filter((one) => !covered.has(one)))
      budget.refusals.set(id, refusal(id, caller, seconds));
    return budget;
  }

  /** The exchange's answer with the refused calls' errors added, every response in request order. */
  merge(original: unknown, answer: JsonAnswer): JsonAnswer {
    if (this.refusals.size === 0 || !Array.isArray(original)) return answer;
    if (answer.status !== 200 && answer.status !== 202) return answer;
    const answered = new Map<unknown, unknown>();
    for (const response of Array.isArray(answer.json) ? answer.json : [])
      answered.set((response as { id?: unknown }).id, response);
    const ordered = [...new Set(original.map(requestIdOf).filter((id) => id !== undefined))];
    const json = ordered
      .map((id) => this.refusals.get(id) ?? answered.get(id))
      .filter((response) => response !== undefined);
    return { ...answer, status: 200, json };
  }
}

function refusal(id: RequestId, caller: McpCaller, seconds: number): unknown {
  const message = `rate limit exceeded: ${caller.perMinute} requests per minute per API key (each call of a batch counts); retry after ${seconds} s`;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: RATE_LIMITED,
      message,
      data: { error: { code: 'rate_limited', message }, retry_after_seconds: seconds },
    },
  };
}
