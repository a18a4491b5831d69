import { type Bus, connectBus, makeEvent, SIGNALS } from '@svc/bus';
import { createLogger } from '@svc/logging';
import { eventually, removePrefixedState, uniquePrefix } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KnownWorkspace, WorkspaceCache } from '../src/workspace-cache.ts';

// The cache of live workspaces, against the real NATS server: what it saves (identity is asked
// once per workspace) must never cost a stale external_id or a deleted workspace beyond an
// announced change.
let bus: Bus;
beforeAll(async () => {
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: uniquePrefix('scope'),
    name: 'scope-cache-test',
    logger: createLogger('test', { level: 'silent' }),
  });
});
afterAll(async () => {
  await bus.close();
  await removePrefixedState(bus.subjects.prefix);
});

/** A loader that answers the current external_id of each workspace and counts its calls. */
function identity() {
  const externalIds = new Map<string, string | null>();
  const loads: string[] = [];
  const load = async (workspace: string): Promise<KnownWorkspace> => {
    loads.push(workspace);
    return {
      partnerId: 'par_1',
      scope: { partner: 'acme', workspace, external_id: externalIds.get(workspace) ?? null },
    };
  };
  return { externalIds, loads, load };
}

/** What identity publishes (through its outbox) when a workspace changes. */
function announce(type: string, workspace: string) {
  const event = makeEvent(type, { partner: 'acme', workspace, external_id: null }, {});
  bus.nc.publish(bus.subjects.subject(type), JSON.stringify(event));
}

describe('WorkspaceCache', () => {
  // Guarantee: repeated events of a workspace ask identity once.
  it('loads a workspace once', async () => {
    const source = identity();
    const cache = new WorkspaceCache(bus, source.load);
    try {
      source.externalIds.set('ws_1', 'crm-1');
      expect(await cache.get('ws_1')).toEqual({
        partnerId: 'par_1',
        scope: { partner: 'acme', workspace: 'ws_1', external_id: 'crm-1' },
      });
      await cache.get('ws_1');
      await cache.get('ws_1');
      expect(source.loads).toEqual(['ws_1']);
    } finally {
      cache.close();
    }
  });

  // Guarantee: after workspace.updated (or deleted) the next event carries what identity says now;
  // other workspaces stay cached.
  it.each([SIGNALS.workspaceUpdated, SIGNALS.workspaceDeleted])('drops a workspace on %s', async (type) => {
    const source = identity();
    const cache = new WorkspaceCache(bus, source.load);
    try {
      source.externalIds.set('ws_a', 'old');
      await cache.get('ws_a');
      await cache.get('ws_b');
      await bus.nc.flush();
      source.externalIds.set('ws_a', 'new');
      announce(type, 'ws_a');
      await eventually(async () =>
        (await cache.get('ws_a')).scope.external_id === 'new' ? true : undefined,
      );
      await cache.get('ws_b');
      expect(source.loads.filter((w) => w === 'ws_b')).toHaveLength(1);
    } finally {
      cache.close();
    }
  });

  // Guarantee: a missed announcement costs at most a minute of staleness.
  it('asks again after a minute', async () => {
    const source = identity();
    let now = 1_000_000;
    const cache = new WorkspaceCache(bus, source.load, () => now);
    try {
      await cache.get('ws_1');
      now += 59_000;
      await cache.get('ws_1');
      expect(source.loads).toHaveLength(1);
      now += 2_000;
      await cache.get('ws_1');
      expect(source.loads).toHaveLength(2);
    } finally {
      cache.close();
    }
  });

  // Guarantee: a failed load is not remembered (identity briefly unavailable).
  it('does not keep a failure', async () => {
    let fail = true;
    const cache = new WorkspaceCache(bus, async (workspace) => {
      if (fail) throw new Error('identity unavailable');
      return { partnerId: 'par_1', scope: { partner: 'acme', workspace, external_id: null } };
    });
    try {
      await expect(cache.get('ws_1')).rejects.toThrow('identity unavailable');
      fail = false;
      expect((await cache.get('ws_1')).scope.workspace).toBe('ws_1');
    } finally {
      cache.close();
    }
  });
});
