import {
  type Bus,
  type ConsumerSettings,
  connectBus,
  consume,
  type DurableConsumer,
  type JsMsg,
  OutboxRelay,
  type RunningConsumer,
} from '@svc/bus';
import type { BusConfig, TracingConfig } from '@svc/config';
import { addService, type GrpcService, type ServiceImplementation, startGrpcServer } from '@svc/contracts';
import type { Logger } from '@svc/logging';
import { Registry } from 'prom-client';
import { BusMetrics } from './bus-metrics.ts';
import { graphCallMetrics } from './graph-metrics.ts';
import { type GrpcCall, grpcServerMetrics } from './grpc-metrics.ts';
import { newGrpcServer, shutDown } from './grpc-server.ts';
import { type OpsServer, type ReadinessCheck, readiness, startOpsServer } from './ops-server.ts';
import { PeriodicJob } from './periodic-job.ts';
import { startTracing, type Tracing } from './tracing.ts';

/** The service's `pg` pool (the outbox relay's type: the kit keeps one `pg`). */
type SqlPool = ConstructorParameters<typeof OutboxRelay>[0];

interface Step {
  name: string;
  run: () => unknown;
}

/** How long calls in flight may take to finish once the gRPC server stops taking new ones. */
const GRPC_GRACE_MS = 10_000;

/**
 * What a service runs besides its handlers: readiness checks, periodic jobs, JetStream consumers,
 * the outbox relay, a gRPC (or HTTP) server, workers and the connections under them all. Each
 * service's start function registers its parts; `stop()` takes them down in one fixed order, so
 * nothing is cut off mid-work and nothing runs against a closed connection:
 *  1. `/readyz` answers 503, so the load balancer stops sending work;
 *  2. no more intake: servers stop taking calls, consumers stop pulling, periodic jobs stop ticking;
 *  3. what is in flight finishes: calls, consumer handlers, job runs (and a job's last run at
 *     stop), workers' drains in registration order, then the relay's pass, since all of those may
 *     write outbox rows;
 *  4. connections close, the last registered first (as they were opened on top of one another);
 *     then tracing exports its last spans; the ops server goes last, so probes see the service
 *     stopping rather than gone.
 * A step that fails is logged and the stop goes on: the connections still close.
 */
export class ServiceRuntime {
  private readonly checks: Record<string, ReadinessCheck> = {};
  private readonly jobs: { job: PeriodicJob; runAtStop: boolean }[] = [];
  private readonly intakes: Step[] = [];
  private readonly consumers: RunningConsumer[] = [];
  private readonly workers: Step[] = [];
  private relay: OutboxRelay | undefined;
  private readonly connections: Step[] = [];
  private ops: OpsServer | undefined;
  private stopped: Promise<void> | undefined;
  private tracer: Tracing | undefined;
  /** The service's metrics, served on `/metrics`; its own metrics register here too. */
  readonly registry = new Registry();
  /** Redeliveries, dead letters, consumer lag and outbox backlog, for the consumers started here. */
  readonly busMetrics = new BusMetrics(this.registry);

  constructor(
    readonly service: string,
    readonly logger: Logger,
  ) {}

  /**
   * Builds a service on a new runtime and answers what `build` returns, plus `stop()`. Tracing,
   * when `config` turns it on, starts first, so every part's spans are recorded. A build that
   * fails half-way (a dependency down at start) stops what it had started before the error goes
   * on, so a failed start leaves no connection or timer behind.
   */
  static async launch<Parts extends object>(
    service: string,
    logger: Logger,
    config: TracingConfig | undefined,
    build: (runtime: ServiceRuntime) => Promise<Parts>,
  ): Promise<Parts & { stop(): Promise<void> }> {
    const runtime = new ServiceRuntime(service, logger);
    try {
      if (config) runtime.tracer = await startTracing(service, config, logger);
      const parts = await build(runtime);
      return { ...parts, stop: () => runtime.stop() };
    } catch (error) {
      await runtime.stop();
      throw error;
    }
  }

  /** True from the moment `stop()` is called. */
  get stopping(): boolean {
    return this.stopped !== undefined;
  }

  /** The service's pool and the Prisma client over it: checked by `/readyz`, closed at the end. */
  useDatabase(pool: SqlPool, prisma?: { $disconnect(): Promise<void> }): this {
    this.readyWhen('database', () => pool.query('SELECT 1'));
    return this.closeAtEnd('database', async () => {
      await prisma?.$disconnect();
      await pool.end();
    });
  }

  /** The NATS connection: checked by `/readyz`, drained after everything that publishes stopped. */
  useBus(bus: Bus): Bus {
    this.readyWhen('nats', () => bus.nc.flush());
    this.closeAtEnd('NATS', () => bus.close());
    return bus;
  }

  /** Connects to NATS as this service (its name on the connection), as `useBus` keeps it. */
  async connectBus(config: BusConfig): Promise<Bus> {
    const bus = await connectBus({
      url: config.NATS_URL,
      prefix: config.NATS_PREFIX,
      replicas: config.NATS_STREAM_REPLICAS,
      name: this.service,
      logger: this.logger,
    });
    return this.useBus(bus);
  }

  /**
   * Serves the service's gRPC API at `address` (its calls measured, its stop in the fixed order)
   * and answers the port it listens on. `maxMessageBytes` raises grpc-js's 4 MiB limit for a
   * service whose messages carry files.
   */
  async serveGrpc<S extends GrpcService>(
    address: string,
    service: S,
    implementation: ServiceImplementation<S>,
    options: { maxMessageBytes?: number } = {},
  ): Promise<number> {
    const server = newGrpcServer(options.maxMessageBytes);
    addService(server, service, implementation, this.logger, this.grpcMetrics());
    const port = await startGrpcServer(server, address);
    this.intake('gRPC server', () => shutDown(server, GRPC_GRACE_MS));
    this.logger.info({ port }, `${this.service} gRPC server listening`);
    return port;
  }

  /** A part the service owns (a client, a cache): closed with the connections, answered back. */
  owns<T extends { close(): unknown }>(name: string, part: T): T {
    this.closeAtEnd(name, () => part.close());
    return part;
  }

  /** A dependency `/readyz` checks (the database, NATS, Redis...). */
  readyWhen(name: string, check: ReadinessCheck): this {
    this.checks[name] = check;
    return this;
  }

  /** A periodic job; with `runAtStop`, it runs once more at stop (to flush what it gathers). */
  every(
    name: string,
    intervalMs: number,
    job: () => Promise<unknown>,
    options: { runAtStop?: boolean } = {},
  ) {
    const periodic = new PeriodicJob(name, intervalMs, job, this.logger);
    periodic.start();
    this.jobs.push({ job: periodic, runAtStop: options.runAtStop ?? false });
    return this;
  }

  /** Starts a durable consumer of the catalog. */
  async consume<P>(
    bus: Bus,
    consumer: DurableConsumer<P>,
    handle: (payload: P, message: JsMsg) => Promise<void>,
    overrides?: Partial<ConsumerSettings>,
  ): Promise<void> {
    this.consumers.push(await consume(bus, this.logger, consumer, handle, overrides, this.busMetrics));
    this.busMetrics.watchConsumer(bus, consumer);
  }

  /**
   * A consumer started elsewhere (one that needs its own loop, such as a group-committing store;
   * it reports to `busMetrics`).
   */
  adoptConsumer<P>(running: RunningConsumer, bus: Bus, consumer: DurableConsumer<P>): this {
    this.consumers.push(running);
    this.busMetrics.watchConsumer(bus, consumer);
    return this;
  }

  /** The relay of the outbox in `schema`: started now, stopped after work in flight. */
  outbox(pool: SqlPool, bus: Bus, schema: string): OutboxRelay {
    const relay = new OutboxRelay(pool, bus, this.logger, { schema });
    relay.start();
    this.relay = relay;
    this.busMetrics.watchOutbox(relay);
    return relay;
  }

  private graphCalls: ReturnType<typeof graphCallMetrics> | undefined;
  private grpcCalls: ((call: GrpcCall) => void) | undefined;

  /** Counts the service's Graph API calls and Meta's usage on `/metrics` (the Graph client's observer). */
  graphMetrics(): ReturnType<typeof graphCallMetrics> {
    this.graphCalls ??= graphCallMetrics(this.registry);
    return this.graphCalls;
  }

  /** Counts a gRPC server's calls on `/metrics` (`addService`'s observer; one set per service). */
  grpcMetrics(): (call: GrpcCall) => void {
    this.grpcCalls ??= grpcServerMetrics(this.registry);
    return this.grpcCalls;
  }

  /** Anything else that takes work from outside; `stop` refuses new work and finishes the rest. */
  intake(name: string, stop: () => Promise<unknown>): this {
    this.intakes.push({ name, run: stop });
    return this;
  }

  /** Background work that drains after intake has stopped (a delivery loop, publish workers). */
  worker(name: string, stop: () => Promise<unknown>): this {
    this.workers.push({ name, run: stop });
    return this;
  }

  /** A connection (pool, client, subscription) closed at the end, after everything that uses it. */
  closeAtEnd(name: string, close: () => unknown): this {
    this.connections.push({ name, run: close });
    return this;
  }

  /** Serves `/healthz`, `/readyz` (503 once stopping) and `/metrics`; answers the port. */
  async startOps(options: { port: number; host?: string }): Promise<number> {
    this.ops = await startOpsServer({
      ...options,
      registry: this.registry,
      service: this.service,
      logger: this.logger,
      checks: this.checks,
      stopping: () => this.stopping,
    });
    return this.ops.port;
  }

  /** Readiness for a service that answers `/readyz` on its own port (the gateway). */
  async readiness(): Promise<{ ready: boolean; checks: Record<string, string> }> {
    if (this.stopping) return { ready: false, checks: {} };
    return readiness(this.checks);
  }

  /** Stops in the fixed order above; a second call waits for the first. */
  stop(): Promise<void> {
    this.stopped ??= this.stopInOrder();
    return this.stopped;
  }

  private async stopInOrder(): Promise<void> {
    this.logger.info('stopping: not ready, no more intake');
    for (const { job } of this.jobs) job.cancel();
    const intakes = this.intakes.map((intake) => this.attempt(intake));
    await Promise.all(
      this.consumers.map((c) => this.attempt({ name: 'consumer', run: () => c.stopPulling() })),
    );
    await Promise.all(intakes);
    await Promise.all(this.consumers.map((c) => this.attempt({ name: 'consumer', run: () => c.finished })));
    await Promise.all(
      this.jobs.map(({ job, runAtStop }) =>
        this.attempt({ name: job.name, run: () => finishJob(job, runAtStop) }),
      ),
    );
    for (const worker of this.workers) await this.attempt(worker);
    const { relay } = this;
    if (relay) await this.attempt({ name: 'outbox relay', run: () => relay.stop() });
    for (const connection of [...this.connections].reverse()) await this.attempt(connection);
    const { tracer } = this;
    if (tracer) await this.attempt({ name: 'tracing', run: () => tracer.shutdown() });
    await this.ops?.close();
  }

  private async attempt(step: Step): Promise<void> {
    try {
      await step.run();
    } catch (err) {
      this.logger.warn({ err, step: step.name }, 'a stop step failed; stopping the rest');
    }
  }
}

async function finishJob(job: PeriodicJob, runAtStop: boolean): Promise<void> {
  await job.finish();
  if (runAtStop) await job.run();
}
