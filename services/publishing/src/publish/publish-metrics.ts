import { Counter, type Registry } from '@svc/ops';

/**
 * How a publish job for one target ended: settled either way, deferred until the network can take
 * it (throttled or down), waiting while the network processes its video, or left to NATS to
 * redeliver.
 */
export type PublishOutcome = 'published' | 'failed' | 'deferred' | 'processing' | 'retried';

/** Prometheus metrics of the publish worker, on the ops port's /metrics. */
export class PublishMetrics {
  private readonly outcomes: Counter;

  constructor(registry: Registry) {
    this.outcomes = new Counter({
      name: 'publishing_publish_outcomes_total',
      help: 'Publish jobs by network and outcome: published, failed (settled, never retried), deferred (the network throttles or is down), processing (checked again while the network processes a video) or retried (our own fault: redelivered)',
      labelNames: ['network', 'outcome'],
      registers: [registry],
    });
  }

  outcome(network: string, outcome: PublishOutcome): void {
    this.outcomes.inc({ network, outcome });
  }
}
