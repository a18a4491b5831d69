import { z } from '@svc/config';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBody } from './control-errors.ts';
import type { Fault } from './store.ts';
import type { World } from './world.ts';

const RATE_LIMIT_CODES = new Set([4, 17, 32, 613, 80001, 80002, 80006]);

/**
 * Codes a container's processing can end with instead of FINISHED (facts §2.3, §2.8): 2207026
 * video format unsupported, 2207076 / 2207077 / 2207082 video processing failures. 6000 is the
 * Page video upload failure (graph/page-video.ts).
 */
const PROCESSING_ERRORS = [2207026, 2207076, 2207077, 2207082, 6000] as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** A processing fault matched this call: what it creates fails processing with this code. */
    processingFault: number | null;
  }
}

const faultBody = z
  .object({
    method: z.string().min(1).optional(),
    path: z.string().startsWith('/'),
    times: z.number().int().positive().default(1),
    status: z.number().int().min(100).max(599).optional(),
    error: z.record(z.string(), z.unknown()).optional(),
    headers: z.record(z.string(), z.string()).default({}),
    delay_ms: z.number().int().nonnegative().default(0),
    processing_error: z.literal(PROCESSING_ERRORS).optional(),
  })
  .refine((f) => f.error !== undefined || f.delay_ms > 0 || f.processing_error !== undefined, {
    message: 'give an error, a delay_ms or a processing_error',
  })
  // An error answers the call, so nothing is created whose processing could fail.
  .refine((f) => f.error === undefined || f.processing_error === undefined, {
    message: 'an error and a processing_error exclude each other',
  });

/** `*` stands for exactly one path segment; everything else matches literally. */
export function faultPattern(path: string): RegExp {
  const parts = path
    .split('/')
    .map((seg) => (seg === '*' ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('/')}/?$`);
}

export function registerFaultRoutes(app: FastifyInstance, world: World): void {
  app.post('/__sandbox/faults', (req, reply) => {
    const f = parseBody(faultBody, req.body);
    const fault: Fault = {
      method: f.method?.toUpperCase() ?? null,
      path: f.path,
      pattern: faultPattern(f.path),
      remaining: f.times,
      status: f.error ? (f.status ?? 400) : null,
      error: f.error ?? null,
      headers: f.headers,
      delayMs: f.delay_ms,
      processingError: f.processing_error ?? null,
    };
    world.store.faults.push(fault);
    return reply.code(201).send({ fault: { ...f, method: fault.method } });
  });
  app.delete('/__sandbox/faults', () => {
    const cleared = world.store.faults.length;
    world.store.faults = [];
    return { cleared };
  });
}

/** A rate-limit fault without explicit headers gets usage headers saying the limit is reached. */
function usageHeaders(fault: Fault, error: Record<string, unknown>): Record<string, string> {
  const code = Number(error.code);
  if (!RATE_LIMIT_CODES.has(code) || Object.keys(fault.headers).length > 0) return fault.headers;
  const headers: Record<string, string> = {
    'x-app-usage': JSON.stringify({ call_count: 100, total_cputime: 12, total_time: 30 }),
  };
  if (code >= 80000) {
    const type = code === 80002 ? 'instagram' : code === 80006 ? 'messenger' : 'pages';
    headers['x-business-use-case-usage'] = JSON.stringify({
      [fault.path.split('/')[1] ?? '0']: [
        { type, call_count: 100, total_cputime: 10, total_time: 20, estimated_time_to_regain_access: 15 },
      ],
    });
  }
  return headers;
}

/**
 * Runs before any Graph route: the next matching calls are delayed and/or answered with the fault,
 * or go through and leave what they create set to fail processing later.
 */
export async function applyFaults(world: World, req: FastifyRequest, reply: FastifyReply, traceId: string) {
  const path = req.url.split('?')[0] ?? '/';
  const fault = world.store.faults.find(
    (f) => f.remaining > 0 && (!f.method || f.method === req.method) && f.pattern.test(path),
  );
  if (!fault) return;
  fault.remaining--;
  world.store.faults = world.store.faults.filter((f) => f.remaining > 0);
  if (fault.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
  req.processingFault = fault.processingError;
  if (!fault.error) return;
  const error = { type: 'OAuthException', ...fault.error, fbtrace_id: traceId };
  return reply
    .code(fault.status ?? 400)
    .headers(usageHeaders(fault, error))
    .send({ error });
}
