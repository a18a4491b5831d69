import { createLogger } from '@svc/logging';
import { loadIdentityConfig } from './config.ts';
import { startIdentity } from './service.ts';

const config = loadIdentityConfig();
const logger = createLogger('identity', { level: config.LOG_LEVEL });
const service = await startIdentity(config, logger);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    logger.info({ signal }, 'shutting down');
    await service.stop();
    process.exit(0);
  });
}
