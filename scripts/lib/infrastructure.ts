import { Socket } from 'node:net';

/** What the system needs running, and how to start each on a developer machine. */
const INFRASTRUCTURE = [
  {
    name: 'PostgreSQL',
    env: 'DATABASE_URL',
    fallback: 'postgresql://postgres@127.0.0.1:5432/social',
    start:
      'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start   (or: docker compose up -d postgres)',
  },
  {
    name: 'Redis',
    env: 'REDIS_URL',
    fallback: 'redis://127.0.0.1:6379',
    start:
      'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no   (or: docker compose up -d redis)',
  },
  {
    name: 'NATS (JetStream)',
    env: 'NATS_URL',
    fallback: 'nats://127.0.0.1:4222',
    start:
      'nats-server -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server &   (or: docker compose up -d nats)',
  },
] as const;

function reachable(url: string, timeoutMs = 1_500): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(Number(port), hostname.replace(/^\[|\]$/g, ''), () => done(true));
  });
}

/** Checks every dependency; prints which are missing and how to start them. */
export async function checkInfrastructure(env = process.env): Promise<boolean> {
  let ok = true;
  for (const item of INFRASTRUCTURE) {
    const url = env[item.env] ?? item.fallback;
    if (await reachable(url)) continue;
    ok = false;
    console.error(`✗ ${item.name} is not reachable at ${url} (${item.env}).\n  Start it with: ${item.start}`);
  }
  return ok;
}
