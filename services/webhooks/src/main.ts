import { createLogger } from '@svc/logging';
import { loadWebhooksConfig } from './config.ts';
import { startWebhooks } from './service.ts';

const config = loadWebhooksConfig();
const logger = createLogger('webhooks', { level: config.LOG_LEVEL });
const service = await startWebhooks(config, logger);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    logger.info({ signal }, 'shutting down');
    await service.stop();
    process.exit(0);
  });
}
