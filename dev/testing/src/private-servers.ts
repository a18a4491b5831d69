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

  /** `kill -9`: the server dies at once, with no clean shutdown (start it again with `restart`). */
  async kill(): Promise<void> {
    await this.halt('SIGKILL');
  }

  /** Stops the server (SIGTERM: NATS and Redis shut down cleanly) and starts it again. */
  async restart(downMs = 0): Promise<void> {
    await this.halt('SIGTERM'); // nothing to do if it was killed
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

  /** One node of a cluster (PrivateNatsCluster), started: it finds the others through its routes. */
  static async node(clusterArgs: string[], serverName: string) {
    const dir = await mkdtemp(path.join(tmpdir(), `svc-private-nats-${serverName}-`));
    const [port, monitorPort] = [await freePort(), await freePort()];
    const args = ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitorPort), '-js', '-sd', dir];
    const node = new PrivateNats('nats-server', [...args, ...clusterArgs], port, dir);
    await node.launch();
    return Object.assign(node, { serverName, monitorPort });
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
}

/**
 * A local JetStream cluster of `size` NATS nodes, for the loss of one node: each node with its
 * own client port, cluster (route) port, monitoring port and store folder, routes to the others.
 * Ready once every node reports JetStream healthy (a meta leader elected).
 */
export class PrivateNatsCluster {
  private constructor(readonly nodes: (PrivateNats & { serverName: string; monitorPort: number })[]) {}

  static async start(size = 3): Promise<PrivateNatsCluster> {
    const name = `faults${process.pid}`;
    const routePorts: number[] = [];
    for (let i = 0; i < size; i++) routePorts.push(await freePort());
    const nodes = [];
    for (let i = 0; i < size; i++) {
      const routes = routePorts.filter((_, j) => j !== i).map((p) => `nats://127.0.0.1:${p}`);
      const args = ['--server_name', `n${i}`, '--cluster', `nats://127.0.0.1:${routePorts[i]}`];
      nodes.push(
        await PrivateNats.node([...args, '--cluster_name', name, '--routes', routes.join(',')], `n${i}`),
      );
    }
    const cluster = new PrivateNatsCluster(nodes);
    await cluster.healthy();
    return cluster;
  }

  /** Every node's client URL, comma-separated, as `NATS_URL` takes a cluster. */
  get url(): string {
    return this.nodes.map((node) => node.url).join(',');
  }

  node(serverName: string) {
    const found = this.nodes.find((node) => node.serverName === serverName);
    if (!found) throw new Error(`no node ${serverName} in this cluster`);
    return found;
  }

  /** Waits until every running node answers its JetStream health check (streams caught up). */
  async healthy(nodes = this.nodes, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const node of nodes) {
      const url = `http://127.0.0.1:${node.monitorPort}/healthz`;
      while ((await fetch(url).catch(() => undefined))?.status !== 200) {
        if (Date.now() > deadline) throw new Error(`${node.serverName} not healthy after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop()));
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
