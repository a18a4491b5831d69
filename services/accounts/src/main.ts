import { runService } from '@svc/ops';
import { loadAccountsConfig } from './config.ts';
import { startAccounts } from './service.ts';

await runService('accounts', loadAccountsConfig, startAccounts);
