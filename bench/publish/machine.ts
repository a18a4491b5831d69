// What the machine and Postgres do while a phase of bench:publish runs: CPU per process, the
// service behind each Postgres connection, transactions committed.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import pg from 'pg';
import { SERVER_URL } from '../database.ts';
import { databaseName, sleep } from './settings.ts';

/** CPU time per process (from /proc), to show where the machine's time goes during a phase. */
export function cpuSnapshot(): {
  ticks: Map<number, { comm: string; ticks: number }>;
  busy: number;
  total: number;
} {
  const ticks = new Map<number, { comm: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(entry), { comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended meanwhile
    }
  }
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + (b || 0), 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { ticks, busy: total - idle, total };
}

export function cpuBreakdown(
  before: ReturnType<typeof cpuSnapshot>,
  after: ReturnType<typeof cpuSnapshot>,
  seconds: number,
  processes: Map<number, string>,
) {
  const TICKS_PER_S = 100;
  const byName = new Map<string, number>();
  const names = new Map(processes);
  names.set(process.pid, 'bench runner');
  for (const [pid, { comm, ticks }] of after.ticks) {
    const used = ticks - (before.ticks.get(pid)?.ticks ?? 0);
    if (used <= 0) continue;
    const name =
      names.get(pid) ?? (['postgres', 'nats-server', 'redis-server'].includes(comm) ? comm : 'other');
    byName.set(name, (byName.get(name) ?? 0) + used);
  }
  const cores = (after.busy - before.busy) / (after.total - before.total);
  // Busy time no live process accounts for: processes that ended meanwhile (other sessions' test
  // runs on a shared machine, short-lived tools) and the kernel.
  const attributed = [...byName.values()].reduce((a, b) => a + b, 0) / TICKS_PER_S / seconds;
  const unattributed = cores * 2 - attributed;
  if (unattributed > 0.01) byName.set('ended processes/kernel', unattributed * seconds * TICKS_PER_S);
  const parts = [...byName.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, t]) => `${name} ${((t / TICKS_PER_S / seconds) * 100).toFixed(0)}%`);
  const foreign =
    ((byName.get('other') ?? 0) + (byName.get('ended processes/kernel') ?? 0)) / TICKS_PER_S / seconds;
  // The system's own CPU: every process of the run (services, sandbox, Postgres, NATS, Redis) but
  // this runner and what is not of the run.
  const notOfTheSystem = ['bench runner', 'other', 'ended processes/kernel'];
  const systemTicks = [...byName]
    .filter(([name]) => !notOfTheSystem.includes(name))
    .reduce((a, [, t]) => a + t, 0);
  return {
    machineBusy: cores,
    foreign,
    line: parts.join(', '),
    systemMs: (systemTicks / TICKS_PER_S) * 1000,
    /** CPU milliseconds of one process (by its label) in the window. */
    msOf: (name: string) => ((byName.get(name) ?? 0) / TICKS_PER_S) * 1000,
  };
}

/** Which service owns each Postgres client port (from /proc: the sockets of each service's process). */
function postgresPortOwners(processes: Map<number, string>): Map<number, string> {
  const inodeToPort = new Map<string, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const local = cols[1]?.split(':')[1];
      const remote = cols[2]?.split(':')[1];
      if (local && remote && Number.parseInt(remote, 16) === 5432 && cols[9])
        inodeToPort.set(cols[9], Number.parseInt(local, 16));
    }
  }
  const owners = new Map<number, string>();
  for (const [pid, name] of processes) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        const port = inode ? inodeToPort.get(inode) : undefined;
        if (port) owners.set(port, name);
      } catch {
        // closed meanwhile
      }
    }
  }
  return owners;
}

/**

 * Samples pg_stat_activity every 250 ms while a phase runs: per service, how many of its pooled
 * connections are running a statement, sitting idle inside a transaction (the service doing other
 * work — JS, a gRPC call — while holding the transaction), or waiting on a lock.
 */
export function sampleDatabase(processes: Map<number, string>) {
  const client = new pg.Client({ connectionString: SERVER_URL });
  const stats = new Map<string, { open: number; active: number; inTx: number; lock: number }>();
  let samples = 0;
  let owners = new Map<number, string>();
  let stopped = false;
  const done = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query<{
        client_port: number;
        state: string;
        wait_event_type: string | null;
      }>(
        `SELECT client_port, state, wait_event_type FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        [databaseName],
      );
      if (rows.some((r) => !owners.has(r.client_port))) owners = postgresPortOwners(processes);
      samples++;
      for (const row of rows) {
        const name = owners.get(row.client_port) ?? 'unknown';
        const entry = stats.get(name) ?? { open: 0, active: 0, inTx: 0, lock: 0 };
        entry.open++;
        if (row.state === 'active') entry.active++;
        if (row.state?.startsWith('idle in transaction')) entry.inTx++;
        if (row.wait_event_type === 'Lock') entry.lock++;
        stats.set(name, entry);
      }
      await sleep(250);
    }
    await client.end();
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      const avg = (n: number) => (n / Math.max(1, samples)).toFixed(1);
      return [...stats.entries()]
        .sort((a, b) => b[1].active + b[1].inTx - (a[1].active + a[1].inTx))
        .map(
          ([name, e]) =>
            `${name}: ${avg(e.open)} open, ${avg(e.active)} running a statement, ${avg(e.inTx)} idle in a transaction, ${avg(e.lock)} waiting on a lock`,
        );
    },
  };
}

/** Postgres transactions committed in this run's database (a standalone statement counts as one). */
export async function transactionsCommitted(): Promise<number> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1',
      [databaseName],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** A latency histogram's cumulative buckets (upper bound in seconds → count), read off `/metrics`. */
export type Buckets = Map<number, number>;

/** The buckets of `metric` (a histogram) on the series whose labels include every one of `labels`. */
export async function histogramOf(metricsUrl: string, metric: string, labels: string[]): Promise<Buckets> {
  const buckets: Buckets = new Map();
  for (const line of (await (await fetch(metricsUrl)).text()).split('\n')) {
    if (!line.startsWith(`${metric}_bucket{`) || !labels.every((l) => line.includes(l))) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1] ?? '';
    buckets.set(le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), Number(line.split(' ').pop()));
  }
  return buckets;
}

/**
 * The upper bound (ms) of the bucket holding quantile `q` of what was observed between two
 * readings of a histogram: the service's own view of its latency, to set beside the client's.
 */
export function quantileBound(before: Buckets, after: Buckets, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const count = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = count(Number.POSITIVE_INFINITY);
  const bound = bounds.find((le) => count(le) >= q * total) ?? Number.POSITIVE_INFINITY;
  return bound * 1000;
}
