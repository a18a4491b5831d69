import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '@svc/testing';
import { expect, it } from 'vitest';
import { type Supervised, Supervisor } from '../src/index.ts';

// Guarantee (`pnpm start`): a process killed with -9 is restarted with a line saying so, while the
// others keep running untouched; stopping goes in stages: the gateway first (nothing new comes in
// while the services still answer), then the services, then the graph-sandbox (their in-flight
// work still reaches it), however quickly each one stops.
const dir = mkdtempSync(path.join(tmpdir(), 'supervisor-'));
const stops = path.join(dir, 'stops.log');

/** A long-running process that writes its name to the stop log when it stops on SIGTERM. */
const child = (name: string, stopMs: number, stop?: Supervised['stop']): Supervised => ({
  name,
  command: process.execPath,
  args: [
    '-e',
    `const fs = require('node:fs'); setInterval(() => {}, 1000);
     process.on('SIGTERM', () => setTimeout(() => { fs.appendFileSync(${JSON.stringify(stops)}, '${name}\\n'); process.exit(0); }, ${stopMs}));`,
  ],
  stop,
});

it('restarts a killed process with backoff and stops in stages', async () => {
  const lines: string[] = [];
  const supervisor = new Supervisor({ log: (line) => lines.push(line), firstDelayMs: 200 });
  supervisor.start([
    child('gateway', 300, 'first'),
    child('publishing', 0),
    child('graph-sandbox', 0, 'last'),
  ]);
  try {
    const before = Object.fromEntries(
      ['gateway', 'publishing', 'graph-sandbox'].map((n) => [n, supervisor.pid(n)]),
    );
    process.kill(before.publishing as number, 'SIGKILL');
    await eventually(() => (supervisor.restarts('publishing') === 1 ? true : undefined));
    expect(supervisor.pid('publishing')).not.toBe(before.publishing);
    expect(lines[0]).toMatch(
      /^✗ publishing died \(SIGKILL\); restarting in 0\.2 s \(at \d\d:\d\d:\d\d UTC\)$/,
    );
    // Backoff: a second death right away waits twice as long.
    process.kill(supervisor.pid('publishing') as number, 'SIGKILL');
    await eventually(() => (supervisor.restarts('publishing') === 2 ? true : undefined));
    expect(lines.filter((l) => l.startsWith('✗'))[1]).toContain('restarting in 0.4 s');
    expect(supervisor.pid('gateway')).toBe(before.gateway);
    expect(supervisor.pid('graph-sandbox')).toBe(before['graph-sandbox']);
    expect(supervisor.restarts('gateway')).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the restarted one is up again
  } finally {
    await supervisor.stop();
  }
  // The gateway took 300 ms to drain; publishing, which stops at once, was only asked after that.
  expect(readFileSync(stops, 'utf8').trim().split('\n')).toEqual(['gateway', 'publishing', 'graph-sandbox']);
});
