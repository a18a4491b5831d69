import { Counter, Histogram, type Registry } from '@svc/ops';

/** Prometheus metrics of the event store and the delivery worker, on the ops port's /metrics. */
export class DeliveryMetrics {
  private readonly stored: Counter;
  private readonly attempts: Counter;
  private readonly latency: Histogram;

  constructor(registry: Registry) {
    this.stored = new Counter({
      name: 'webhooks_events_stored_total',
      help: 'Events stored, by whether they were new or a redelivery from NATS',
      labelNames: ['result'],
      registers: [registry],
    });
    this.attempts = new Counter({
      name: 'webhooks_delivery_attempts_total',
      help: 'Delivery attempts by outcome: delivered, retrying (failed, another attempt is scheduled) or undelivered (failed, the last one)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'webhooks_delivery_attempt_seconds',
      help: 'Duration of delivery attempts (connect to end of response, capped by the deadline)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  }

  events(stored: number, duplicates: number): void {
    if (stored > 0) this.stored.inc({ result: 'new' }, stored);
    if (duplicates > 0) this.stored.inc({ result: 'duplicate' }, duplicates);
  }

  attempt(record: { state: string; latencyMs: number }): void {
    this.attempts.inc({ outcome: record.state === 'pending' ? 'retrying' : record.state });
    this.latency.observe(record.latencyMs / 1000);
  }
}
