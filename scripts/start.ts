// `pnpm start`: checks PostgreSQL, Redis and NATS, builds, migrates, and runs every service in
// development mode, wired to each other and to the graph-sandbox. A service that dies is restarted
// with backoff (@svc/ops Supervisor); Ctrl-C stops them all, the graph-sandbox last.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Supervisor, serviceNodeFlags } from '@svc/ops';
import { checkInfrastructure } from './lib/infrastructure.ts';
import { migrateAll } from './migrate.ts';

const root = path.resolve(import.meta.dirname, '..');
const port = process.env.PORT ?? '8080';
const sandboxPort = process.env.GRAPH_SANDBOX_PORT ?? '8090';
const gatewayUrl = `http://127.0.0.1:${port}`;

// One place wires the services together (development defaults; production sets each explicitly).
const env: NodeJS.ProcessEnv = {
  APP_ENV: 'development',
  IDENTITY_GRPC_ADDRESS: '127.0.0.1:50051',
  IDENTITY_GRPC_URL: '127.0.0.1:50051',
  ACCOUNTS_GRPC_ADDRESS: '127.0.0.1:50052',
  ACCOUNTS_GRPC_URL: '127.0.0.1:50052',
  PUBLISHING_GRPC_ADDRESS: '127.0.0.1:50053',
  PUBLISHING_GRPC_URL: '127.0.0.1:50053',
  WEBHOOKS_GRPC_ADDRESS: '127.0.0.1:50054',
  WEBHOOKS_GRPC_URL: '127.0.0.1:50054',
  INBOX_GRPC_ADDRESS: '127.0.0.1:50055',
  INBOX_GRPC_URL: '127.0.0.1:50055',
  PUBLIC_BASE_URL: gatewayUrl,
  GRAPH_SANDBOX_PORT: sandboxPort,
  GRAPH_API_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
  FACEBOOK_DIALOG_URL: `http://127.0.0.1:${sandboxPort}`,
  SANDBOX_WEBHOOK_URL: `${gatewayUrl}/webhooks/meta`,
  SANDBOX_DEAUTHORIZE_URL: `${gatewayUrl}/webhooks/meta/deauthorize`,
  ...process.env,
  PORT: port,
};

/** The workspace folders `pnpm start` runs, each as a process named after its folder. */
const FOLDERS = [
  'services/identity',
  'services/accounts',
  'services/publishing',
  'services/webhooks',
  'services/inbox',
  'dev/graph-sandbox',
  'services/gateway',
];
/** The edge stops first, the networks' stand-in last (`Supervised.stop`). */
const STOP_STAGE: Record<string, 'first' | 'last'> = { gateway: 'first', 'graph-sandbox': 'last' };

async function main(): Promise<void> {
  console.log(
    'Starting in DEVELOPMENT mode (built-in secrets, loopback webhooks allowed). Never use this in production.',
  );
  if (!(await checkInfrastructure(env))) process.exit(1);
  const build = spawnSync(
    path.join(root, 'node_modules/.bin/turbo'),
    ['run', 'build', '--output-logs=errors-only'],
    { cwd: root, stdio: 'inherit' },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
  await migrateAll();

  const supervisor = new Supervisor({ log: (line) => console.error(line) });
  const built = FOLDERS.filter((folder) => existsSync(path.join(root, folder, 'dist/main.js')));
  supervisor.start(
    built.map((folder) => {
      const dir = path.join(root, folder);
      const service = path.basename(folder);
      return {
        name: service,
        command: process.execPath,
        args: [...serviceNodeFlags(dir), '--enable-source-maps', path.join(dir, 'dist/main.js')],
        cwd: root,
        env,
        stop: STOP_STAGE[service],
      };
    }),
  );
  let stopping = false;
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    console.log('Stopping the gateway, then the services, then the graph-sandbox...');
    void supervisor.stop().then(() => process.exit(0));
  };
  console.log(
    `Gateway: ${gatewayUrl}  ·  API docs: ${gatewayUrl}/v1/docs  ·  graph-sandbox: http://127.0.0.1:${sandboxPort}`,
  );
  console.log('Get a partner key: pnpm --silent admin partners create --slug my-company');
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
}

main().catch((error: unknown) => {
  console.error(`✗ start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
