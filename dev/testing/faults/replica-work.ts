import { connectThroughLink, createUser, newLink, open } from '../src/connect.ts';
import type { Outcome } from './burst.ts';
import { RECOVERY_LIMIT_MS } from './fault-runs.ts';
import type { FaultSystem } from './fault-system.ts';

/** Long enough for many sweeps of each replica (EXPIRY_SWEEP_MS is 200 ms in the suite). */
const QUIET_MS = 2_000;

/** One piece of work seen done (`account.expired: <id>`...), with the event that announced it. */
interface Handled {
  key: string;
  eventId?: string;
}

/**
 * The background work of two replicas of accounts and of inbox, counted item by item from
 * outside: the history import (catch-up) of each newly connected account (inbox's log line, from
 * either replica), the expiry sweep's `account.expired` of each account whose token ran out, and
 * the workspace purge's `account.disconnected` of each account (events stored by webhooks, and
 * delivered). Each phase waits until every item is handled, then some more, so that a second run
 * of anything would show.
 */
export async function backgroundWorkOnce(fs: FaultSystem): Promise<Outcome> {
  const { system, call, world } = fs;
  const pages = [{ name: 'Sweep One' }, { name: 'Sweep Two' }, { name: 'Sweep Three' }];
  const user = await createUser(system, pages);
  const link = await newLink(call);
  const sandbox = { sandbox: { url: system.addresses.sandboxUrl } };
  const answer = { userId: user.user.id, decision: 'approve' as const };
  const picker = await connectThroughLink(sandbox, link.url, 'page_network', answer);
  // Several Pages granted: the connect page asks which ones; all of them.
  const choiceId = /name="choice_id" value="([^"]+)"/.exec(picker.body)?.[1] ?? '';
  const chosen: [string, string][] = [
    ['choice_id', choiceId],
    ...user.pages.map((p): [string, string] => ['page_id', p.id]),
  ];
  await open(`${system.gatewayUrl}/connect/oauth/pages`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(chosen).toString(),
  });
  const listed = (await call('GET', `/v1/workspaces/${link.workspaceId}/accounts`)).body.data ?? [];
  const ids: string[] = listed.map((a: { id: string }) => a.id);
  if (ids.length !== pages.length)
    throw new Error(`${pages.length} accounts expected, ${ids.length} connected`);
  const handled = async () => [...historyImports(fs), ...(await accountEvents(fs, link.workspaceId))];

  const expected = ids.map((id) => `history imported: ${id}`);
  await seen(expected, handled);
  const expiring = ids.slice(0, 2);
  await world.db.query(
    `UPDATE accounts.accounts SET token_expires_at = now() - interval '1 second' WHERE id = ANY($1)`,
    [expiring],
  );
  expected.push(...expiring.map((id) => `account.expired: ${id}`));
  await seen(expected, handled);
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));

  // Deleting the workspace purges its earlier events from the store (all but those announcing the
  // deletion): what was handled before it is kept from here.
  const beforeDeletion = await handled();
  const deleted = await call('DELETE', `/v1/workspaces/${link.workspaceId}`);
  if (deleted.status !== 204) throw new Error(`workspace delete: ${deleted.status}`);
  expected.push(...ids.map((id) => `account.disconnected: ${id}`));
  const handledSince = async () => withEarlier(await handled(), beforeDeletion);
  await seen(expected, handledSince);
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  const done = await handledSince();
  await delivered(done, fs);
  return tally(expected, done, world.delivered());
}

/** What is handled now, and what was handled earlier and is no longer listed (each once). */
function withEarlier(now: Handled[], earlier: Handled[]): Handled[] {
  const same = (a: Handled, b: Handled) => a.key === b.key && a.eventId === b.eventId;
  return [...now, ...earlier.filter((old) => !now.some((current) => same(current, old)))];
}

/** Waits until every key was handled at least once (at most the recovery limit). */
async function seen(keys: string[], handled: () => Promise<Handled[]>): Promise<void> {
  const deadline = Date.now() + RECOVERY_LIMIT_MS;
  for (;;) {
    const now = new Set((await handled()).map((h) => h.key));
    if (keys.every((key) => now.has(key)) || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until every event was delivered to the partner (at most the recovery limit). */
async function delivered(done: Handled[], fs: FaultSystem): Promise<void> {
  const deadline = Date.now() + RECOVERY_LIMIT_MS;
  const events = done.flatMap((h) => (h.eventId ? [h.eventId] : []));
  while (!events.every((id) => fs.world.delivered().has(id)) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Each history import, as inbox logs it (from either replica). */
function historyImports(fs: FaultSystem): Handled[] {
  return fs.system.logs
    .filter((line) => line.msg === 'inbox history imported')
    .map((line) => ({ key: `history imported: ${String(line.account)}` }));
}

/** The workspace's account events, as webhooks stored them. */
async function accountEvents(fs: FaultSystem, workspaceId: string): Promise<Handled[]> {
  const { rows } = await fs.world.db.query<{ id: string; type: string; body: string }>(
    `SELECT id, type, body FROM webhooks.events
      WHERE workspace_id = $1 AND type IN ('account.expired', 'account.disconnected')`,
    [workspaceId],
  );
  return rows.map((row) => {
    const account = (JSON.parse(row.body) as { data: { account: { id: string } } }).data.account.id;
    return { key: `${row.type}: ${account}`, eventId: row.id };
  });
}

function tally(expected: string[], done: Handled[], deliveredIds: Set<string>): Outcome {
  const missing = expected.filter((key) => !done.some((h) => h.key === key));
  const duplicated = expected.reduce(
    (sum, key) => sum + Math.max(0, done.filter((h) => h.key === key).length - 1),
    0,
  );
  const undelivered = done.filter((h) => h.eventId && !deliveredIds.has(h.eventId)).length;
  return { lost: missing.length, duplicated, undelivered, missing };
}
