import { runService } from '@svc/ops';
import { loadPublishingConfig } from './config.ts';
import { startPublishing } from './service.ts';

await runService('publishing', loadPublishingConfig, startPublishing);
