import { newId } from '@svc/ids';

/** The event envelope of spec section 6: exactly the body a webhook delivery carries. */
export interface EventEnvelope<Data = Record<string, unknown>> {
  id: string;
  type: string;
  created_at: string;
  partner: string;
  workspace: string | null;
  external_id: string | null;
  data: Data;
}

export function makeEvent<Data>(
  type: string,
  scope: { partner: string; workspace: string | null; external_id: string | null },
  data: Data,
  now: Date = new Date(),
): EventEnvelope<Data> {
  return { id: newId('event', now.getTime()), type, created_at: now.toISOString(), ...scope, data };
}
