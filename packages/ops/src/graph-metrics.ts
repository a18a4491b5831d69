import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CallMetrics } from './call-metrics.ts';

/**
 * Graph API calls as a service made them: by endpoint (ids replaced by `{id}`, so labels are
 * bounded by the client's code) and outcome (`ok` or the error's kind), their duration, and the
 * usage Meta last reported for the app and for the busiest Page or Instagram account.
 * Structurally the Graph client's `GraphCallObserver`.
 */
export function graphCallMetrics(registry: Registry) {
  const calls = new Counter({
    name: 'graph_api_calls_total',
    help: 'Graph API calls, by endpoint and outcome (ok, or the error kind)',
    labelNames: ['endpoint', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'graph_api_call_seconds',
    help: 'Time from sending a Graph API call to its answer, by endpoint',
    labelNames: ['endpoint'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
    registers: [registry],
  });
  const usage = new Gauge({
    name: 'graph_api_usage_percent',
    help: "Meta's last reported usage of its rate limit: the app's, and the highest of any business object's",
    labelNames: ['scope'],
    registers: [registry],
  });
  const answered = new CallMetrics(calls, duration);
  const appUsage = usage.labels({ scope: 'app' });
  const businessUsage = usage.labels({ scope: 'business' });
  return {
    called(endpoint: string, outcome: string, seconds: number) {
      answered.observe(
        `${endpoint} ${outcome}`,
        () => ({ counted: { endpoint, outcome }, timed: { endpoint } }),
        seconds,
      );
    },
    usage(percent: { app: number; business: number }) {
      appUsage.set(percent.app);
      businessUsage.set(percent.business);
    },
  };
}
