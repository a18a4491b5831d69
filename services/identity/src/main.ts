import { runService } from '@svc/ops';
import { loadIdentityConfig } from './config.ts';
import { startIdentity } from './service.ts';

await runService('identity', loadIdentityConfig, startIdentity);
