import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunningSandbox } from '@svc/graph-sandbox';
import { type ChildEntry, type ServiceChild, startChild } from './child-process.ts';
import { freePort } from './http.ts';
import { type InProcess, type ServiceName, type StartOptions, startInProcess } from './in-process.ts';
import { type LogLine, logSink, unwatchLogs, watchLogs } from './logs.ts';
import { createPartner, type Partner, type PartnerOptions } from './partners.ts';
import { removePrefixedState } from './prefixed-state.ts';
import { type SandboxControl, type SandboxOptions, sandboxControl, startSandbox } from './sandbox.ts';
import { createTestDatabase } from './test-database.ts';
import { uniquePrefix } from './unique.ts';
import { type Addresses, wiringEnv } from './wiring.ts';

export type { ServiceChild } from './child-process.ts';
export { buildBundles } from './child-process.ts';
export type { InProcess, ServiceName, StartOptions } from './in-process.ts';
export type { SandboxControl } from './sandbox.ts';

/** Where a service runs: in this process, or as a child process from its source or its bundle. */
export type RunMode = 'in-process' | ChildEntry;

export interface SystemOptions {
  /** The services to start, in the order identity, accounts, webhooks, publishing, inbox, gateway. */
  services: ServiceName[];
  /** One mode for every service, or one per service (default: in this process). */
  run?: RunMode | Partial<Record<ServiceName, RunMode>>;
  /** Variables for every service (LOG_LEVEL, limits...), laid over the wiring. */
  env?: Record<string, string>;
  /** Variables for one service, laid over `env`. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Start options of the services that run in this process (an injected clock, say). */
  startOptions?: StartOptions;
  /** The graph-sandbox (started by default when accounts or publishing is); `false`: none. */
  sandbox?: SandboxOptions | false;
  /** A database with every migration applied; default: a fresh clone of the test template. */
  databaseUrl?: string;
  /** The Redis key and NATS stream prefix; default: a unique one. */
  prefix?: string;
  /** `capture` (default): every JSON log line kept in `logs`; `stderr`: written to stderr. */
  logs?: 'capture' | 'stderr';
  /** Extra Node flags for a child process, by its label (CPU profiles, say). */
  nodeFlags?: (label: string) => string[];
}

/** One running instance of a service: in this process, or a child process. */
export interface Instance<N extends ServiceName = ServiceName> {
  name: N;
  label: string;
  /** Its gRPC address (`host:port`), or the gateway's base URL. */
  address: string;
  /** The environment it was started with. */
  env: Record<string, string>;
  service?: InProcess[N];
  child?: ServiceChild;
}

export interface AnotherInstance {
  env?: Record<string, string>;
  label?: string;
  options?: StartOptions;
}

const ORDER: ServiceName[] = ['identity', 'accounts', 'webhooks', 'publishing', 'inbox', 'gateway'];

/**
 * One way to start the system in tests and benchmarks: a database, a Redis/NATS prefix of its
 * own, the graph-sandbox, a temporary media folder and the chosen services wired to each other as
 * `scripts/start.ts` wires them, each in this process (tests reach into it) or as a child process
 * (a crash test kills it, a bench measures it). Stop it with `stop()`.
 */
export class System {
  readonly logs: LogLine[] = [];
  readonly instances: Instance[] = [];
  readonly sandboxControl: SandboxControl;
  sandboxChild: ServiceChild | undefined;
  private readonly sink = logSink(this.logs);

  private constructor(
    readonly options: SystemOptions,
    readonly databaseUrl: string,
    readonly prefix: string,
    readonly addresses: Addresses,
    readonly sandbox: RunningSandbox | undefined,
  ) {
    this.sandboxControl = sandboxControl(addresses.sandboxUrl);
  }

  get gatewayUrl(): string {
    return this.addresses.gatewayUrl;
  }

  get mediaDir(): string {
    return this.addresses.mediaDir;
  }

  static async start(options: SystemOptions): Promise<System> {
    const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
    const prefix = options.prefix ?? uniquePrefix();
    const addresses = await unstartedAddresses(options);
    const wanted = options.services.some((n) => n === 'accounts' || n === 'publishing' || n === 'inbox');
    const sandbox = await startSandbox(options.sandbox ?? (wanted ? {} : false), addresses, {
      logs: options.logs ?? 'capture',
      nodeFlags: options.nodeFlags?.('graph-sandbox') ?? [],
    });
    const system = new System(options, databaseUrl, prefix, addresses, sandbox.running);
    system.sandboxChild = sandbox.child;
    watchLogs(system.logs);
    try {
      for (const name of ORDER.filter((n) => options.services.includes(n))) {
        const first = await system.start(name, { label: name });
        system.addresses[name === 'gateway' ? 'gatewayUrl' : name] = first.address;
      }
    } catch (error) {
      await system.stop();
      throw error;
    }
    return system;
  }

  /** The mode a service runs in. */
  modeOf(name: ServiceName): RunMode {
    const run = this.options.run ?? 'in-process';
    return typeof run === 'string' ? run : (run[name] ?? 'in-process');
  }

  /** Where the first instance of a service answers: its gRPC address, or the gateway's URL. */
  addressOf(name: ServiceName): string {
    const found = this.instances.find((i) => i.name === name);
    if (!found) throw new Error(`${name} is not part of this system`);
    return found.address;
  }

  /** The first instance of a service, running in this process. */
  service<N extends ServiceName>(name: N): InProcess[N] {
    const found = this.instances.find((i) => i.name === name)?.service;
    if (!found) throw new Error(`${name} does not run in this process`);
    return found as InProcess[N];
  }

  /** The first instance of a service, running as a child process. */
  child(name: ServiceName): ServiceChild {
    const found = this.instances.find((i) => i.name === name)?.child;
    if (!found) throw new Error(`${name} does not run as a child process`);
    return found;
  }

  /** Every child process of this system (services and sandbox), for the bench's CPU figures. */
  children(): ServiceChild[] {
    const services = this.instances.flatMap((i) => (i.child ? [i.child] : []));
    return this.sandboxChild ? [...services, this.sandboxChild] : services;
  }

  /** The environment a service of this system gets (its wiring, then `env`, then its own). */
  envOf(name: ServiceName, listen: string, opsPort: string, extra: Record<string, string> = {}) {
    return {
      APP_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: this.databaseUrl,
      REDIS_PREFIX: `${this.prefix}:`,
      NATS_PREFIX: this.prefix,
      ...wiringEnv(name, this.addresses, listen, opsPort),
      ...this.options.env,
      ...this.options.serviceEnv?.[name],
      ...extra,
    };
  }

  /**
   * Starts an instance of a service in its mode: the first one of each is started by
   * `startSystem`; more are replicas (a second gateway, a worker-only publishing process).
   */
  async start<N extends ServiceName>(name: N, more: AnotherInstance = {}): Promise<Instance<N>> {
    const label = more.label ?? name;
    const mode = this.modeOf(name);
    const instance =
      mode === 'in-process'
        ? await this.startHere(name, label, more)
        : await this.startChildOf(name, label, mode, more);
    this.instances.push(instance as Instance);
    return instance;
  }

  private async startHere<N extends ServiceName>(name: N, label: string, more: AnotherInstance) {
    const first = !this.instances.some((i) => i.name === name);
    // The first gateway listens where the sandbox and accounts were told it would.
    const listen =
      name === 'gateway' ? (first ? new URL(this.addresses.gatewayUrl).port : '0') : '127.0.0.1:0';
    const env = this.envOf(name, listen, '0', more.env);
    const destination = this.options.logs === 'stderr' ? process.stderr : this.sink;
    const options = { ...this.options.startOptions, ...more.options };
    const service = await startInProcess(name, env, destination, options);
    const address =
      'url' in service ? (service.url as string) : `127.0.0.1:${(service as { port: number }).port}`;
    return { name, label, address, env, service } satisfies Instance<N>;
  }

  private async startChildOf<N extends ServiceName>(
    name: N,
    label: string,
    entry: ChildEntry,
    more: AnotherInstance,
  ) {
    const first = !this.instances.some((i) => i.name === name);
    const port = name === 'gateway' && first ? new URL(this.addresses.gatewayUrl).port : await freePort();
    const ops = await freePort();
    const listen = name === 'gateway' ? String(port) : `127.0.0.1:${port}`;
    const env = this.envOf(name, listen, String(ops), more.env);
    const address = name === 'gateway' ? `http://127.0.0.1:${port}` : listen;
    const readyUrl = name === 'gateway' ? `${address}/readyz` : `http://127.0.0.1:${ops}/readyz`;
    const spec = { ...childBasics(this.options, name, label), entry, env, readyUrl };
    const instance: Instance<N> = { name, label, address, env };
    // A restarted child replaces the killed one, so `stop()` stops the one running now.
    const tracked = (child: ServiceChild): ServiceChild => ({
      ...child,
      restart: async () => {
        instance.child = tracked(await child.restart());
        return instance.child;
      },
    });
    instance.child = tracked(await startChild(spec, this.logs));
    return instance;
  }

  /** A partner with its key, as an operator creates one (see partners.ts). */
  createPartner(slug = uniquePrefix('p'), options: PartnerOptions = {}): Promise<Partner> {
    const identity = this.instances.find((i) => i.name === 'identity');
    if (!identity) throw new Error('partners live in identity, which this system does not run');
    const running = identity.service as InProcess['identity'] | undefined;
    return createPartner(running, identity.env, slug, options);
  }

  /** Stops one instance (a replica a test no longer wants) before the rest of the system. */
  async stopInstance(instance: Instance): Promise<void> {
    this.instances.splice(this.instances.indexOf(instance), 1);
    await (instance.service ? instance.service.stop() : instance.child?.stop());
  }

  /** Stops everything, newest first, then removes the media folder and this prefix's NATS streams and Redis keys. */
  async stop(): Promise<void> {
    unwatchLogs(this.logs);
    for (const instance of [...this.instances].reverse()) await this.stopInstance(instance);
    await this.sandbox?.close();
    await this.sandboxChild?.stop();
    if (this.addresses.mediaDir) await rm(this.addresses.mediaDir, { recursive: true, force: true });
    await removePrefixedState(this.prefix);
  }
}

export const startSystem = (options: SystemOptions): Promise<System> => System.start(options);

function childBasics(options: SystemOptions, service: string, label: string) {
  return {
    label,
    folder: `services/${service}`,
    entry: 'bundle' as ChildEntry,
    logs: options.logs ?? 'capture',
    nodeFlags: options.nodeFlags?.(label) ?? [],
  };
}

/**
 * Addresses before anything starts: the gateway's port is chosen now (accounts builds connect URLs
 * from it, the sandbox calls it back), and every service not started gets a port nothing uses.
 */
async function unstartedAddresses(options: SystemOptions): Promise<Addresses> {
  const nowhere = async () => `127.0.0.1:${await freePort()}`;
  const publishing = options.services.includes('publishing');
  return {
    identity: await nowhere(),
    accounts: await nowhere(),
    webhooks: await nowhere(),
    publishing: await nowhere(),
    inbox: await nowhere(),
    gatewayUrl: `http://${await nowhere()}`,
    sandboxUrl: `http://${await nowhere()}`,
    mediaDir: publishing ? await mkdtemp(path.join(tmpdir(), 'svc-media-')) : '',
  };
}

export { removePrefixedState } from './prefixed-state.ts';
