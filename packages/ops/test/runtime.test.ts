import { CONSUMERS, connectBus, makeEvent, SUBJECTS } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { eventually, removePrefixedState, uniquePrefix } from '@svc/testing';
import { describe, expect, it } from 'vitest';
import { ServiceRuntime } from '../src/index.ts';

// The runtime's stop order, with a real JetStream consumer: a service leaves the load balancer
// before it stops taking work, and finishes the work it holds before its connections close.
const logger = createLogger('test', { level: 'silent' });
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

async function readyzStatus(port: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
}

describe('ServiceRuntime.stop', () => {
  // Guarantee: /readyz answers 503 before any intake stops; a consumer handler in flight, a job's
  // last run and a worker's drain all finish before the first connection closes.
  it('stops in order: unready, no intake, in-flight work done, connections closed', async () => {
    const prefix = uniquePrefix('runtime');
    const steps: string[] = [];
    const runtime = new ServiceRuntime('runtime-test', logger);
    const bus = runtime.useBus(await connectBus({ url: NATS_URL, prefix, name: 'runtime', logger }));
    runtime.closeAtEnd('probe connection', () => steps.push('connection closed'));
    let releaseHandler: () => void = () => {};
    const handlerGate = new Promise<void>((resolve) => (releaseHandler = resolve));
    await runtime.consume(bus, CONSUMERS.accountsWorkspaceDeleted, async (signal) => {
      steps.push(`handler started for ${signal.workspace}`);
      await handlerGate;
      steps.push('handler finished');
    });
    runtime.every('flush', 60_000, async () => steps.push('last flush'), { runAtStop: true });
    runtime.worker('drain', async () => steps.push('worker drained'));
    const opsPort = await runtime.startOps({ port: 0 });
    runtime.intake('server', async () => steps.push(`intake stopped, readyz ${await readyzStatus(opsPort)}`));
    expect(await readyzStatus(opsPort)).toBe(200);

    const publisher = await connectBus({ url: NATS_URL, prefix, name: 'publisher', logger });
    try {
      const event = makeEvent(
        SUBJECTS.workspaceDeleted.name,
        { partner: 'acme', workspace: 'ws_1', external_id: null },
        {},
      );
      await publisher.js.publish(publisher.subjects.subject(event.type), JSON.stringify(event));
      await eventually(() => (steps.includes('handler started for ws_1') ? true : undefined));

      const stopped = runtime.stop();
      expect(await readyzStatus(opsPort)).toBe(503);
      await eventually(() => (steps.some((s) => s.startsWith('intake stopped')) ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(steps).not.toContain('connection closed');
      releaseHandler();
      await stopped;

      expect(steps).toEqual([
        'handler started for ws_1',
        'intake stopped, readyz 503',
        'handler finished',
        'last flush',
        'worker drained',
        'connection closed',
      ]);
      // The handled message was acked before the connection went: nothing waits to be redelivered.
      const info = await publisher.jsm.consumers.info(
        publisher.subjects.streamName('internal'),
        publisher.subjects.durable(CONSUMERS.accountsWorkspaceDeleted),
      );
      expect(info.num_ack_pending).toBe(0);
      expect(info.num_pending).toBe(0);
      await expect(fetch(`http://127.0.0.1:${opsPort}/healthz`)).rejects.toThrow();
    } finally {
      await publisher.close();
      await removePrefixedState(prefix);
    }
  });

  // Guarantee: a failing step is logged and the stop goes on, so connections still close.
  it('closes connections even when a step fails', async () => {
    const runtime = new ServiceRuntime('runtime-test', logger);
    const closed: string[] = [];
    runtime.closeAtEnd('first opened', () => closed.push('first opened'));
    runtime.closeAtEnd('then opened', () => closed.push('then opened'));
    runtime.worker('broken', async () => {
      throw new Error('drain failed');
    });
    await runtime.stop();
    await runtime.stop();
    expect(closed).toEqual(['then opened', 'first opened']);
  });

  // Guarantee: a start that fails half-way (a dependency down) closes what it had opened.
  it('stops what a failed start had opened', async () => {
    const closed: string[] = [];
    const failing = ServiceRuntime.launch('runtime-test', logger, undefined, async (runtime) => {
      runtime.closeAtEnd('database', () => closed.push('database'));
      throw new Error('NATS is not answering');
    });
    await expect(failing).rejects.toThrow('NATS is not answering');
    expect(closed).toEqual(['database']);
  });
});
