import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { connectBus, makeEvent } from '@svc/bus';
import { createClient, WebhooksService } from '@svc/contracts';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { createTestDatabase, eventually, uniquePrefix } from '@svc/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Receiver } from './receiver.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Runs the real service entry point as its own process and waits for its gRPC port. */
async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'services/webhooks/src/main.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the webhooks service did not start')), 30_000);
    child.once('exit', (code) => reject(new Error(`the webhooks service exited (${code})`)));
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === 'webhooks gRPC server listening' && entry.port) {
        clearTimeout(timer);
        resolve(entry.port);
      }
    });
  });
  return { child, port };
}

describe('crash in the middle of a burst', () => {
  // Guarantee: after a kill -9 of the service mid-burst (events unacknowledged in NATS, attempts
  // claimed and in flight), every event is stored exactly once and delivered at least once.
  it('loses nothing and stores nothing twice across a kill -9', { timeout: 120_000 }, async () => {
    const databaseUrl = await createTestDatabase();
    const prefix = uniquePrefix('crash');
    const env = {
      APP_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl,
      NATS_PREFIX: prefix,
      WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:0',
      OPS_PORT: '0',
      WEBHOOK_TIMEOUT_MS: '1000',
      EVENT_STORE_ACK_WAIT_MS: '2000',
    };
    const receiver = await Receiver.start();
    // A little slow, so attempts are in flight when the process dies.
    receiver.behaviour = (_request, response) => setTimeout(() => response.writeHead(200).end(), 5);
    const logger = createLogger('crash-test', { level: 'warn' });
    const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'crash-test', logger });
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2, options: '-c search_path=webhooks' });
    try {
      let service = await startService(env);
      const client = createClient(WebhooksService, `127.0.0.1:${service.port}`);
      const slug = uniquePrefix('crash-partner-');
      await client.putWebhook({
        partnerId: newId('partner'),
        partnerSlug: slug,
        url: receiver.url,
        rotateSecret: false,
      });
      client.close();

      const ids: string[] = [];
      const publish = async (count: number) => {
        const events = Array.from({ length: count }, () =>
          makeEvent(
            'post.published',
            { partner: slug, workspace: 'ws_crash', external_id: null },
            { n: ids.length },
          ),
        );
        for (const event of events) ids.push(event.id);
        await Promise.all(
          events.map((event) =>
            bus.js.publish(bus.subjects.subject(event.type), JSON.stringify(event), { msgID: event.id }),
          ),
        );
      };
      await publish(500);
      await eventually(() => (receiver.requests.length >= 150 ? true : undefined), 30_000);
      service.child.kill('SIGKILL');
      await new Promise((resolve) => service.child.once('exit', resolve));
      const deliveredBeforeCrash = new Set(receiver.requests.map((r) => r.headers['x-service-delivery']))
        .size;
      expect(deliveredBeforeCrash).toBeLessThan(500);
      await publish(500); // the second half of the burst arrives while the service is down

      service = await startService(env);
      const everyId = new Set(ids);
      await eventually(() => {
        const delivered = new Set(receiver.requests.map((r) => r.headers['x-service-delivery']));
        return [...everyId].every((id) => delivered.has(id)) ? true : undefined;
      }, 90_000);
      // The receiver may answer before the attempt's outcome is committed: wait for the records too.
      const counts = await eventually(async () => {
        const { rows } = await db.query(
          `SELECT count(*)::int AS events, count(DISTINCT e.id)::int AS distinct_events,
                  count(*) FILTER (WHERE d.state = 'delivered')::int AS delivered
             FROM events e LEFT JOIN deliveries d ON d.event_id = e.id`,
        );
        return rows[0].delivered >= 1000 ? rows[0] : undefined;
      }, 30_000);
      expect(counts).toEqual({ events: 1000, distinct_events: 1000, delivered: 1000 });
      const deliveredIds = receiver.requests.map((r) => r.headers['x-service-delivery']);
      expect(deliveredIds.every((id) => everyId.has(String(id)))).toBe(true);
      service.child.kill('SIGTERM');
      await new Promise((resolve) => service.child.once('exit', resolve));
    } finally {
      await bus.jsm.streams.delete(bus.subjects.streamName('events')).catch(() => {});
      await bus.jsm.streams.delete(bus.subjects.streamName('internal')).catch(() => {});
      await bus.close();
      await db.end();
      await receiver.close();
    }
  });
});
