import type { Bus, ConsumerObserver, DurableConsumer, OutboxRelay } from '@svc/bus';
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Whether a service's messaging keeps up, per durable consumer: redeliveries and dead letters as
 * they happen, and the lag (messages not yet delivered to it) and the outbox backlog (rows not yet
 * published) read from JetStream and Postgres when Prometheus scrapes, so they cost nothing between
 * scrapes. A source that does not answer (NATS or Postgres down) leaves its last value.
 */
export class BusMetrics implements ConsumerObserver {
  private readonly redeliveries: Counter<'consumer'>;
  private readonly deadLetters: Counter<'consumer'>;
  private readonly watched: { bus: Bus; consumer: DurableConsumer<unknown> }[] = [];
  private readonly relays: OutboxRelay[] = [];

  constructor(registry: Registry) {
    const registers = [registry];
    this.redeliveries = new Counter({
      name: 'bus_consumer_redeliveries_total',
      help: 'Messages delivered again to a consumer (a failed handler, an ack timeout, a dead worker)',
      labelNames: ['consumer'],
      registers,
    });
    this.deadLetters = new Counter({
      name: 'bus_dead_letters_total',
      help: 'Messages a consumer gave up on after its last delivery, moved to the dead-letter stream',
      labelNames: ['consumer'],
      registers,
    });
    const watched = this.watched;
    new Gauge({
      name: 'bus_consumer_lag',
      help: 'Messages of its stream not yet delivered to a durable consumer',
      labelNames: ['consumer'],
      registers,
      async collect() {
        await Promise.all(
          watched.map(async ({ bus, consumer }) => {
            const stream = bus.subjects.streamName(consumer.subject.stream);
            const info = await bus.jsm.consumers
              .info(stream, bus.subjects.durable(consumer))
              .catch(() => null);
            if (info) this.set({ consumer: consumer.durable }, info.num_pending);
          }),
        );
      },
    });
    const relays = this.relays;
    new Gauge({
      name: 'outbox_backlog',
      help: 'Outbox rows committed and not yet published to NATS',
      registers,
      async collect() {
        const counts = await Promise.all(relays.map((relay) => relay.backlog().catch(() => null)));
        if (counts.every((count) => count !== null)) this.set(counts.reduce((a, b) => a + b, 0));
      },
    });
  }

  redelivered(durable: string): void {
    this.redeliveries.inc({ consumer: durable });
  }

  deadLettered(durable: string): void {
    this.deadLetters.inc({ consumer: durable });
  }

  watchConsumer<P>(bus: Bus, consumer: DurableConsumer<P>): void {
    this.watched.push({ bus, consumer: consumer as DurableConsumer<unknown> });
  }

  watchOutbox(relay: OutboxRelay): void {
    this.relays.push(relay);
  }
}
