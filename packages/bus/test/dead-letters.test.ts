import { newId } from '@svc/ids';
import { createLogger } from '@svc/logging';
import { eventually, removePrefixedState, uniquePrefix } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Bus,
  CONSUMERS,
  type ConsumerObserver,
  connectBus,
  consume,
  listDeadLetters,
  replayDeadLetter,
  type WorkspaceSignal,
} from '../src/index.ts';

// Poison messages against the real NATS server: a message whose handler always fails is retried
// with the consumer's delays a bounded number of times, then moved to the dead-letter stream with
// why, without holding up the messages behind it; a replay hands it back to that consumer only.
const logger = createLogger('test', { level: 'silent' });
let bus: Bus;
beforeAll(async () => {
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: uniquePrefix('dead'),
    name: 'dead-letters-test',
    logger,
  });
});
afterAll(async () => {
  await bus.close();
  await removePrefixedState(bus.subjects.prefix);
});

const signal = (workspace: string): WorkspaceSignal => ({
  id: newId('event'),
  type: 'workspace.deleted',
  created_at: new Date().toISOString(),
  partner: 'acme',
  workspace,
  external_id: null,
  data: {},
});

const counts = () => {
  const seen = { redelivered: 0, deadLettered: [] as string[] };
  const observer: ConsumerObserver = {
    redelivered: () => seen.redelivered++,
    deadLettered: (durable) => seen.deadLettered.push(durable),
  };
  return { seen, observer };
};

describe('dead letters', () => {
  it('retries a failing message with backoff, dead-letters it, and replays it to its consumer', async () => {
    const broken = new Set(['ws_poison']);
    const attempts: number[] = [];
    const handled: string[] = [];
    const { seen, observer } = counts();
    const settings = { maxDeliver: 3, retryDelaysMs: [300, 600] };
    const purge = async ({ workspace }: WorkspaceSignal) => {
      if (workspace === 'ws_poison') attempts.push(Date.now());
      if (broken.has(workspace)) throw new Error(`purge of ${workspace} failed: relation missing`);
      handled.push(workspace);
    };
    const consumer = await consume(
      bus,
      logger,
      CONSUMERS.accountsWorkspaceDeleted,
      purge,
      settings,
      observer,
    );
    // Another durable on the same subject: it handles the originals, and must ignore the replay.
    const other: string[] = [];
    const bystander = await consume(bus, logger, CONSUMERS.publishingWorkspaceDeleted, async (s) => {
      other.push(s.workspace);
    });
    try {
      const publish = (ws: string) =>
        bus.js.publish(bus.subjects.subject('workspace.deleted'), JSON.stringify(signal(ws)));
      await publish('ws_poison');
      for (const ws of ['ws_a', 'ws_b', 'ws_c']) await publish(ws);

      // The ones behind it are handled while it waits for its retries (an in-order consumer).
      await eventually(() => (handled.length === 3 ? true : undefined));
      expect(attempts.length).toBeLessThan(3);

      const letter = await eventually(async () => (await listDeadLetters(bus))[0]);
      expect(attempts).toHaveLength(3);
      // Backoff: the second try waited the first delay, the third the second one.
      const [first = 0, second = 0, third = 0] = attempts;
      expect(second - first).toBeGreaterThanOrEqual(300 - 50);
      expect(third - second).toBeGreaterThanOrEqual(600 - 50);
      expect(letter).toMatchObject({
        consumer: 'accounts-workspace-deleted',
        subject: 'workspace.deleted',
        deliveries: 3,
        reason: 'purge of ws_poison failed: relation missing',
      });
      expect(Date.parse(letter.at)).toBeGreaterThan(third - 1_000);
      expect(seen).toEqual({ redelivered: 2, deadLettered: ['accounts-workspace-deleted'] });
      // Acked once dead-lettered: nothing pending, nothing coming back.
      const info = await bus.jsm.consumers.info(
        bus.subjects.streamName('internal'),
        bus.subjects.durable(CONSUMERS.accountsWorkspaceDeleted),
      );
      expect(info.num_ack_pending + info.num_pending).toBe(0);

      // Fixed, then replayed: handled by that consumer, not by the other reader of the subject.
      broken.clear();
      await replayDeadLetter(bus, letter.id);
      await eventually(() => (handled.includes('ws_poison') ? true : undefined));
      expect(await listDeadLetters(bus)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(other.sort()).toEqual(['ws_a', 'ws_b', 'ws_c', 'ws_poison']);
    } finally {
      for (const c of [consumer, bystander]) {
        await c.stopPulling();
        await c.finished;
      }
    }
  });
});
