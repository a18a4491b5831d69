import { expect } from 'vitest';
import type { System } from '../src/system.ts';
import { type Burst, type Outcome, outcome, sendBurst, type World } from './burst.ts';
import type { Answer } from './gateways.ts';

const BURST = Number(process.env.FAULTS_BURST ?? 8);
const SPREAD_MS = 3_000;
export const RECOVERY_LIMIT_MS = 30_000;

/** One line of the printed table: a fault (or a check) and what came of it. */
export interface FaultRow {
  fault: string;
  outcome: Outcome;
  recoveryMs: number;
  answers: string;
}

/**
 * One fault in the middle of a burst, then the checks from outside: nothing lost or done twice,
 * everything delivered, no 5xx but 503, recovery within 30 s of the fault, no service left dead,
 * every answered request in the request logs.
 * The row is kept (for the table) before anything is asserted.
 */
export async function survive(
  system: System,
  world: World,
  rows: FaultRow[],
  fault: string,
  inject: () => Promise<void>,
): Promise<void> {
  const answersBefore = world.gateways.answers.length;
  const sending = sendBurst(world, `F${rows.length}-${Date.now().toString(36)}`, BURST, SPREAD_MS);
  await new Promise((resolve) => setTimeout(resolve, SPREAD_MS / 3));
  const faultStarted = Date.now();
  await inject();
  const burst = await sending;
  const settled = await settle(world, burst);
  // From the fault until everything sent around it is done (published, stored, delivered).
  const recoveryMs = Date.now() - faultStarted;
  const answers = world.gateways.answers.slice(answersBefore);
  const statuses = summarize(answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`));
  rows.push({ fault, outcome: settled, recoveryMs, answers: statuses });

  expect(settled.missing).toEqual([]);
  expect({ duplicated: settled.duplicated, undelivered: settled.undelivered }).toEqual({
    duplicated: 0,
    undelivered: 0,
  });
  expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
  const wrong = answers.filter((a) => a.status >= 500 && a.status !== 503);
  expect(wrong).toEqual([]);
  // A graceful stop fails nothing at all: not even a 503 or a broken connection.
  if (fault.startsWith('SIGTERM')) expect(answers.every((a) => a.status > 0 && a.status < 300)).toBe(true);
  const dead = system.children().filter((c) => c.process.exitCode !== null || c.process.signalCode !== null);
  expect(dead.map((c) => c.label)).toEqual([]);
  // A gateway killed with -9 takes the request logs it had not sent yet (up to a second's) with it.
  if (!fault.startsWith('kill -9 gateway')) expect(await unlogged(world, answers)).toEqual([]);
}

/**
 * The request ids of answers that never reached identity's request logs, once they had time to:
 * every answered request is logged, across a restart of identity or of its database.
 */
async function unlogged(world: World, answers: Answer[]): Promise<string[]> {
  const ids = answers.flatMap((a) => (a.requestId ? [a.requestId] : []));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await world.db.query<{ request_id: string }>(
      'SELECT request_id FROM identity.request_logs WHERE request_id = ANY($1)',
      [ids],
    );
    const logged = new Set(rows.map((row) => row.request_id));
    const missing = ids.filter((id) => !logged.has(id));
    if (missing.length === 0 || Date.now() > deadline) return missing;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Waits until nothing is lost or undelivered (at most twice the recovery limit, to measure). */
export async function settle(world: World, burst: Burst): Promise<Outcome> {
  const deadline = Date.now() + 2 * RECOVERY_LIMIT_MS;
  for (;;) {
    const now = await outcome(world, burst).catch(() => undefined);
    if (now && ((now.lost === 0 && now.undelivered === 0) || Date.now() > deadline)) return now;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function summarize(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n}× ${v}`).join(', ');
}

export function printTable(rows: FaultRow[]): void {
  const lines = [
    'fault                          | lost | duplicated | undelivered | recovery | gateway answers',
    '-------------------------------|------|------------|-------------|----------|----------------',
    ...rows.map(
      (r) =>
        `${r.fault.padEnd(31)}| ${String(r.outcome.lost).padEnd(5)}| ${String(r.outcome.duplicated).padEnd(11)}| ${String(r.outcome.undelivered).padEnd(12)}| ${`${(r.recoveryMs / 1000).toFixed(1)} s`.padEnd(9)}| ${r.answers}${r.outcome.missing.length ? ` | lost: ${r.outcome.missing.join('; ')}` : ''}`,
    ),
  ];
  process.stdout.write(`\n${lines.join('\n')}\n`);
}
