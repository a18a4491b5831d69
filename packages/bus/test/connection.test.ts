import { createLogger } from '@svc/logging';
import { freePort, uniquePrefix } from '@svc/testing';
import { expect, it } from 'vitest';
import { connectBus, STREAMS, type StreamKey } from '../src/index.ts';

// Guarantee: NATS_URL may name a cluster's nodes comma-separated, and a client whose first node is
// down connects through another (the fault suite's cluster case proves the failover under load).
it('connects through the next server of a comma-separated list when one is down', async () => {
  const live = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const down = `nats://127.0.0.1:${await freePort()}`;
  const prefix = uniquePrefix('servers');
  const logger = createLogger('test', { level: 'silent' });
  const bus = await connectBus({ url: ` ${down} , ${live}`, prefix, name: 'servers-test', logger });
  try {
    expect(bus.nc.getServer()).toBe(live.replace('nats://', ''));
  } finally {
    for (const key of Object.keys(STREAMS) as StreamKey[])
      await bus.jsm.streams.delete(bus.subjects.streamName(key)).catch(() => {});
    await bus.close();
  }
});
