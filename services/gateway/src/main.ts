import { runService } from '@svc/ops';
import { loadGatewayConfig } from './config.ts';
import { startGateway } from './service.ts';

await runService('gateway', loadGatewayConfig, startGateway);
