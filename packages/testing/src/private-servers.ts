import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './http.ts';

/**
 * NATS (JetStream) and Redis servers of a test's own on spare ports, for the tests that kill or
 * restart them (the shared ones on 4222 and 6379 serve every other test: never restart those).
 * Started from the machine's binaries (`nats-server`, `redis-server`). A restart keeps the port
 * and, for NATS, the JetStream store, as a server restarted in place does.
 */
class PrivateServer {
  private child: ChildProcess | undefined;

  protected constructor(
    private readonly command: string,
    private readonly args: string[],
    readonly port: number,
    private readonly dir: string,
  ) {}

  protected async launch(): Promise<void> {
    this.child = spawn(this.command, this.args, { stdio: 'ignore' });
    await waitForPort(this.port);
  }

  /** Stops the server (SIGTERM: NATS and Redis shut down cleanly) and starts it again. */
  async restart(downMs = 0): Promise<void> {
    await this.halt('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.halt('SIGKILL');
    await rm(this.dir, { recursive: true, force: true });
  }

  private async halt(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

export class PrivateNats extends PrivateServer {
  static async start(): Promise<PrivateNats> {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-private-nats-'));
    const port = await freePort();
    const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
    const server = new PrivateNats('nats-server', args, port, dir);
    await server.launch();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
}

export class PrivateRedis extends PrivateServer {
  static async start(): Promise<PrivateRedis> {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-private-redis-'));
    const port = await freePort();
    const args = ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'];
    const server = new PrivateRedis('redis-server', [...args, '--dir', dir], port, dir);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}

async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      }).once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
