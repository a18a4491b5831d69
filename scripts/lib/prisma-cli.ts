import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The Prisma CLI of the service in `serviceDir`, run offline. Prisma 6.19 downloads native engines
 * on every call unless these two variables name an existing file; with `engine: "js"` in
 * prisma.config.ts it then uses its bundled WASM schema engine and never loads them (see
 * ../shared/notes/environment.md).
 */
export function startPrismaCli(
  serviceDir: string,
  args: string[],
  databaseUrl: string,
  stdio: StdioOptions = ['ignore', 'pipe', 'inherit'],
): ChildProcess {
  const cli = createRequire(path.join(serviceDir, 'package.json')).resolve('prisma/build/index.js');
  const anyExistingFile = process.execPath;
  return spawn(process.execPath, [cli, ...args], {
    cwd: serviceDir,
    stdio,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PRISMA_QUERY_ENGINE_LIBRARY: anyExistingFile,
      PRISMA_SCHEMA_ENGINE_BINARY: anyExistingFile,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
      CHECKPOINT_DISABLE: '1',
    },
  });
}

/** What `migrate deploy` prints once the engine has applied everything (or found nothing to do). */
const DEPLOYED = /All migrations have been successfully applied|No pending migrations to apply/;

/**
 * `prisma migrate deploy` for one service. The WASM engine leaves a ten-second timer behind once
 * it is done, which kept the CLI alive (and a minute went by for all the services): the CLI is
 * ended as soon as it has reported success, and its exit code counts otherwise. Its output is
 * shown only when it fails.
 */
export function deployMigrations(serviceDir: string, databaseUrl: string): Promise<void> {
  const child = startPrismaCli(serviceDir, ['migrate', 'deploy'], databaseUrl);
  let deployed = false;
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (!deployed && DEPLOYED.test(output)) {
      deployed = true;
      child.kill();
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (deployed || code === 0) resolve();
      else reject(new Error(`prisma migrate deploy failed in ${serviceDir} (exit code ${code}):\n${output}`));
    });
  });
}
