import { CONSUMERS, connectBus, makeEvent, SUBJECTS } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { eventually, removePrefixedState, uniquePrefix } from '@svc/testing';
import { expect, it } from 'vitest';
import { ServiceRuntime } from '../src/index.ts';

// Guarantee: /metrics says whether messaging keeps up, per consumer: redeliveries and dead letters
// as they happen, and the lag of messages not yet delivered (real NATS).
const logger = createLogger('test', { level: 'silent' });
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

it('counts redeliveries, dead letters and lag per consumer', async () => {
  const prefix = uniquePrefix('metrics');
  const runtime = new ServiceRuntime('metrics-test', logger);
  const bus = runtime.useBus(await connectBus({ url: NATS_URL, prefix, name: 'metrics', logger }));
  const fail = async () => {
    throw new Error('always fails');
  };
  await runtime.consume(bus, CONSUMERS.accountsWorkspaceDeleted, fail, {
    maxDeliver: 2,
    retryDelaysMs: [50],
  });
  const port = await runtime.startOps({ port: 0 });
  const metrics = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  try {
    const event = makeEvent(
      'workspace.deleted',
      { partner: 'acme', workspace: 'ws_1', external_id: null },
      {},
    );
    await bus.js.publish(bus.subjects.subject(SUBJECTS.workspaceDeleted.name), JSON.stringify(event));
    const text = await eventually(async () => {
      const body = await metrics();
      return body.includes('bus_dead_letters_total{consumer="accounts-workspace-deleted"') ? body : undefined;
    });
    expect(text).toMatch(/bus_dead_letters_total\{consumer="accounts-workspace-deleted"[^}]*\} 1/);
    expect(text).toMatch(/bus_consumer_redeliveries_total\{consumer="accounts-workspace-deleted"[^}]*\} 1/);
    expect(text).toMatch(/bus_consumer_lag\{consumer="accounts-workspace-deleted"[^}]*\} 0/);
  } finally {
    await runtime.stop();
    await removePrefixedState(prefix);
  }
});
