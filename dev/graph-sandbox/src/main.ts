import { loadConfig } from '@svc/config';
import { startSandbox } from './app.ts';
import { sandboxConfigSchema } from './config.ts';

// Wiring only: read the environment, start, and stop cleanly on a signal.
const config = loadConfig(sandboxConfigSchema());
const sandbox = await startSandbox(config);
sandbox.app.log.info(
  { url: sandbox.url, publicUrl: config.publicUrl, webhookUrl: config.webhookUrl || null },
  'graph sandbox listening',
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void sandbox.close().then(() => process.exit(0));
  });
}
