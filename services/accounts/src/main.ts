import { createLogger } from '@svc/logging';
import { loadAccountsConfig } from './config.ts';
import { startAccounts } from './service.ts';

const config = loadAccountsConfig();
const logger = createLogger('accounts', { level: config.LOG_LEVEL });
const service = await startAccounts(config, logger);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    logger.info({ signal }, 'shutting down');
    await service.stop();
    process.exit(0);
  });
}
