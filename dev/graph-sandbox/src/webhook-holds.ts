import type { WebhookHold } from './store.ts';

/**
 * Webhooks Meta never delivers (its outage beyond the retries, a delivery lost on its side), on
 * demand: a hold set through the control API withholds the next matching event webhooks. A
 * withheld delivery is registered like any other (so it can be replayed later, as a late
 * delivery) but never attempted.
 */
type HoldKind = NonNullable<WebhookHold['kind']>;

interface EventShape {
  object?: unknown;
  entry?: { id?: unknown; messaging?: { message?: { is_echo?: unknown } }[]; changes?: unknown[] }[];
}

/** What an event payload is about: its account (`entry.id`) and its kind. */
function describe(payload: Record<string, unknown>): { accountId: string; kind: HoldKind | null } {
  const entry = (payload as EventShape).entry?.[0];
  const accountId = String(entry?.id ?? '');
  const messaging = entry?.messaging?.[0];
  // Reactions, reads, edits and the like are messaging items without a `message`: no kind of theirs.
  if (messaging) {
    if (!messaging.message) return { accountId, kind: null };
    return { accountId, kind: messaging.message.is_echo === true ? 'echo' : 'message' };
  }
  const comments = (payload as EventShape).object !== 'permissions' && Boolean(entry?.changes?.length);
  return { accountId, kind: comments ? 'comment' : null };
}

/** Whether a hold takes this payload; the hold it matched counts one down (and goes at zero). */
export function takeHold(holds: WebhookHold[], payload: Record<string, unknown>): boolean {
  const { accountId, kind } = describe(payload);
  const index = holds.findIndex(
    (h) =>
      h.remaining > 0 &&
      (h.accountId === null || h.accountId === accountId) &&
      (h.kind === null || h.kind === kind),
  );
  const hold = holds[index];
  if (!hold) return false;
  hold.remaining--;
  if (hold.remaining === 0) holds.splice(index, 1);
  return true;
}
