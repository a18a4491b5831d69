import { runService } from '@svc/ops';
import { loadWebhooksConfig } from './config.ts';
import { startWebhooks } from './service.ts';

await runService('webhooks', loadWebhooksConfig, startWebhooks);
