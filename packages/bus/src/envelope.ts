import { type EventEnvelope, eventEnvelope } from '@svc/contracts/public';
import { isId, newId } from '@svc/ids';
import { z } from 'zod';

/** What an event envelope says of its workspace (spec 6): partner slug and current external_id. */
export interface EventScope {
  partner: string;
  workspace: string;
  external_id: string | null;
}

export function makeEvent<Data>(
  type: string,
  scope: { partner: string; workspace: string | null; external_id: string | null },
  data: Data,
  now: Date = new Date(),
): EventEnvelope<Data> {
  return { id: newId('event', now.getTime()), type, created_at: now.toISOString(), ...scope, data };
}

/**
 * The envelope as consumers check it. Strict where a stored event is filtered or sorted by the
 * field (id, type, partner, created_at), loose inside `data`, which is the payload's own business.
 */
export const eventEnvelopeSchema = eventEnvelope.extend({
  id: z.string().refine((id) => isId('event', id), 'not an event id'),
  type: z.string().regex(/^[a-z]+(\.[a-z_]+)*$/, 'not an event type'),
  created_at: z.string().refine((at) => !Number.isNaN(Date.parse(at)), 'not a timestamp'),
  partner: z.string().min(1),
  // Checked without being copied: events are checked on the webhooks store's hot path.
  data: z.custom<Record<string, unknown>>(isPlainObject, 'not an object'),
});

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An envelope whose `data` has a known shape (extra keys are kept). */
export function envelopeWith<Data extends z.ZodType>(data: Data) {
  return eventEnvelopeSchema.extend({ data });
}
