import { createLogger } from '@svc/logging';
import { loadGatewayConfig } from './config.ts';
import { startGateway } from './service.ts';

const config = loadGatewayConfig();
const logger = createLogger('gateway', { level: config.LOG_LEVEL });
const gateway = await startGateway(config, logger);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    logger.info({ signal }, 'shutting down');
    await gateway.stop();
    process.exit(0);
  });
}
