import { runService } from '@svc/ops';
import { loadInboxConfig } from './config.ts';
import { startInbox } from './service.ts';

await runService('inbox', loadInboxConfig, startInbox);
