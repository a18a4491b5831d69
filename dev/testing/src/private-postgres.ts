import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { migrateAll } from '../../../scripts/migrate.ts';
import { applyMigrationFiles } from './global-setup.ts';
import { freePort } from './http.ts';

const run = promisify(execFile);

/**
 * A PostgreSQL server of a test's own on a spare port, for the tests that stop or restart the
 * database (the shared one on 5432 serves every other test and agent: never restart that). Started
 * from the machine's binaries (/usr/lib/postgresql/<version>/bin); as the `postgres` user when the
 * test runs as root, since initdb and postgres refuse to run as root. Trust authentication, one
 * database with every service's migrations applied.
 */
export class PrivatePostgres {
  private constructor(
    private readonly bin: string,
    private readonly dataDir: string,
    readonly port: number,
  ) {}

  /** `postgresql://postgres@127.0.0.1:<port>/social`, migrated. */
  get databaseUrl(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/social`;
  }

  /** `migrations: 'files'`: the migration files run straight, without Prisma (seconds, not minutes). */
  static async start(options: { migrations?: 'prisma' | 'files' } = {}): Promise<PrivatePostgres> {
    const versions = (await readdir('/usr/lib/postgresql')).sort((a, b) => Number(b) - Number(a));
    if (!versions[0]) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
    const bin = path.join('/usr/lib/postgresql', versions[0], 'bin');
    const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-private-pg-'));
    // The server runs as postgres when we are root: it must own its folder.
    if (asRoot()) await run('chown', ['postgres:postgres', dataDir]);
    await chmod(dataDir, 0o700);
    const server = new PrivatePostgres(bin, dataDir, await freePort());
    await server.pg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    await server.ctl('start');
    await server.pg('createdb', ['-h', '127.0.0.1', '-p', String(server.port), '-U', 'postgres', 'social']);
    if (options.migrations === 'files') await applyMigrationFiles(server.databaseUrl);
    else await migrateAll(server.databaseUrl, true);
    return server;
  }

  /**
   * Restarts the server as `pg_ctl restart -m fast` does: every session is terminated (57P01),
   * the server is down for a moment, then accepts connections again.
   */
  async restart(): Promise<void> {
    await this.ctl('restart', ['-m', 'fast']);
  }

  async stop(): Promise<void> {
    await this.ctl('stop', ['-m', 'immediate']).catch(() => {});
    await rm(this.dataDir, { recursive: true, force: true });
  }

  private ctl(action: string, extra: string[] = []) {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dataDir}`;
    return this.pg('pg_ctl', [
      action,
      '-D',
      this.dataDir,
      '-w',
      '-l',
      path.join(this.dataDir, 'log'),
      '-o',
      options,
      ...extra,
    ]);
  }

  private async pg(program: string, args: string[]): Promise<void> {
    const binary = path.join(this.bin, program);
    await (asRoot() ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args));
  }
}

const asRoot = () => process.getuid?.() === 0;
