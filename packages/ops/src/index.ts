import { createLogger, type Logger } from '@svc/logging';

export { Counter, Histogram, Registry } from 'prom-client';
export { type OpsServer, type ReadinessCheck, readiness, startOpsServer } from './ops-server.ts';
export { PeriodicJob } from './periodic-job.ts';
export { ServiceRuntime } from './runtime.ts';

/**
 * A service's `main`: load config (exits with one line on a bad variable), start, and stop
 * cleanly on SIGINT/SIGTERM so in-flight work finishes and nothing is left half-done.
 */
export async function runService<Config extends { LOG_LEVEL: string }>(
  name: string,
  loadConfig: () => Config,
  start: (config: Config, logger: Logger) => Promise<{ stop(): Promise<void> }>,
): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(name, { level: config.LOG_LEVEL });
  const service = await start(config, logger);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, async () => {
      logger.info({ signal }, 'shutting down');
      await service.stop();
      process.exit(0);
    });
  }
}
export { CallMetrics } from './call-metrics.ts';
export { ConcurrencySlots, type SlotBounds } from './concurrency-slots.ts';
export { serviceNodeFlags } from './node-flags.ts';
export { type Supervised, Supervisor } from './supervisor.ts';
