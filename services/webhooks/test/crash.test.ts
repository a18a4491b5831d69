import { connectBus, makeEvent } from '@svc/bus';
import { createClient, WebhooksService } from '@svc/contracts';
import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { eventually, Receiver, uniquePrefix } from '@svc/testing';
import { type System, startSystem } from '@svc/testing/system';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

let system: System | undefined;

afterAll(async () => {
  await system?.stop();
});

describe('crash in the middle of a burst', () => {
  // Guarantee: after a kill -9 of the service mid-burst (events unacknowledged in NATS, attempts
  // claimed and in flight), every event is stored exactly once and delivered at least once.
  it('loses nothing and stores nothing twice across a kill -9', { timeout: 120_000 }, async () => {
    // The real service entry point as its own process, so it can be killed with SIGKILL.
    system = await startSystem({
      services: ['webhooks'],
      run: 'source',
      prefix: uniquePrefix('crash'),
      env: { WEBHOOK_TIMEOUT_MS: '1000', EVENT_STORE_ACK_WAIT_MS: '2000' },
    });
    const { databaseUrl, prefix } = system;
    const receiver = await Receiver.start();
    // A little slow, so attempts are in flight when the process dies.
    receiver.behaviour = (_request, response) => setTimeout(() => response.writeHead(200).end(), 5);
    const logger = createLogger('crash-test', { level: 'warn' });
    const bus = await connectBus({ url: 'nats://127.0.0.1:4222', prefix, name: 'crash-test', logger });
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2, options: '-c search_path=webhooks' });
    try {
      let service = system.child('webhooks');
      const client = createClient(WebhooksService, system.addressOf('webhooks'));
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
      await service.stop('SIGKILL');
      const deliveredBeforeCrash = new Set(receiver.requests.map((r) => r.headers['x-service-delivery']))
        .size;
      expect(deliveredBeforeCrash).toBeLessThan(500);
      await publish(500); // the second half of the burst arrives while the service is down

      service = await service.restart();
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
      await service.stop('SIGTERM');
    } finally {
      await bus.jsm.streams.delete(bus.subjects.streamName('events')).catch(() => {});
      await bus.jsm.streams.delete(bus.subjects.streamName('internal')).catch(() => {});
      await bus.close();
      await db.end();
      await receiver.close();
    }
  });
});
