import { LocalCache } from '@svc/cache';
import { createLogger } from '@svc/logging';
import { eventually, removePrefixedState, uniquePrefix } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_ANNOUNCEMENTS,
  announcedKeys,
  type Bus,
  connectBus,
  makeEvent,
  SUBJECTS,
} from '../src/index.ts';

// A cache dropped by its owner's announcements on the real NATS server.
let bus: Bus;
beforeAll(async () => {
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: uniquePrefix('cache'),
    name: 'local-cache-test',
    logger: createLogger('test', { level: 'silent' }),
  });
});
afterAll(async () => {
  await bus.close();
  await removePrefixedState(bus.subjects.prefix);
});

describe('LocalCache announcements', () => {
  const announce = (type: string, accountId: string) => {
    const event = makeEvent(
      type,
      { partner: 'acme', workspace: 'ws_1', external_id: null },
      {
        account: { id: accountId },
      },
    );
    bus.nc.publish(bus.subjects.subject(type), JSON.stringify(event));
  };

  // Guarantee: an announcement of the catalog drops the entry it is about, and only that one.
  it.each(ACCOUNT_ANNOUNCEMENTS.map((s) => s.name))('drops an account on %s', async (type) => {
    const cache = new LocalCache<string>({ maxAgeMs: 60_000 }).dropOn(
      announcedKeys(bus, ACCOUNT_ANNOUNCEMENTS, (event) => event.data.account.id),
    );
    try {
      cache.set('acc_1', 'old');
      cache.set('acc_2', 'other');
      await bus.nc.flush();
      announce(type, 'acc_1');
      await eventually(() => (cache.peek('acc_1') === undefined ? true : undefined));
      expect(cache.peek('acc_2')).toBe('other');
    } finally {
      cache.close();
    }
  });

  // Guarantee: a value loaded while its change was announced is not kept (it may predate the change).
  it('does not keep a load that an announcement overtook', async () => {
    let release: (value: string) => void = () => {};
    const cache = new LocalCache<string>({
      maxAgeMs: 60_000,
      load: () => new Promise<string>((resolve) => (release = resolve)),
    }).dropOn(announcedKeys(bus, [SUBJECTS.workspaceUpdated], (signal) => signal.workspace));
    try {
      await bus.nc.flush();
      const loading = cache.get('ws_1');
      const event = makeEvent(
        SUBJECTS.workspaceUpdated.name,
        {
          partner: 'acme',
          workspace: 'ws_1',
          external_id: null,
        },
        {},
      );
      bus.nc.publish(bus.subjects.subject(event.type), JSON.stringify(event));
      await bus.nc.flush();
      await new Promise((resolve) => setTimeout(resolve, 50));
      release('before the change');
      expect(await loading).toBe('before the change');
      expect(cache.peek('ws_1')).toBeUndefined();
    } finally {
      cache.close();
    }
  });
});
