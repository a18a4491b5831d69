import { Writable } from 'node:stream';
import { createLogger } from '@svc/logging';
import { eventually, removePrefixedState, uniquePrefix } from '@svc/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bus, CONSUMERS, connectBus, consume, type PublishJob, SUBJECTS } from '../src/index.ts';

// Typed consumers against the real NATS server: handlers get payloads checked against the
// catalog's schema, and a payload that fails it is terminated, never redelivered.
const logs: Record<string, unknown>[] = [];
const logger = createLogger('test', {
  destination: new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  }),
});
let bus: Bus;
beforeAll(async () => {
  bus = await connectBus({
    url: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    prefix: uniquePrefix('consume'),
    name: 'consumer-test',
    logger,
  });
});
afterAll(async () => {
  await bus.close();
  await removePrefixedState(bus.subjects.prefix);
});

const publishJob = (payload: string, id: string) =>
  bus.js.publish(bus.subjects.subject(SUBJECTS.publishJob.name), payload, { msgID: id });

describe('consume', () => {
  // Guarantee: a poison payload (not JSON, or not the subject's schema) is logged with its subject
  // and the schema's issue, terminated, and never handed to the handler or delivered again; the
  // messages behind it are handled.
  it('terminates a poison payload and carries on', async () => {
    const handled: PublishJob[] = [];
    const consumer = await consume(bus, logger, CONSUMERS.publishingWorkers, async (job) => {
      handled.push(job);
    });
    try {
      await publishJob('{"post_id":"post_1","account_id":"acc_1"}', 'poison-schema');
      await publishJob('not json', 'poison-json');
      await publishJob('{"post_id":"post_1","account_id":"acc_1","attempt":1}', 'valid');
      await eventually(() => (handled.length > 0 ? true : undefined));
      expect(handled).toEqual([{ post_id: 'post_1', account_id: 'acc_1', attempt: 1 }]);

      const dropped = logs.filter((l) => l.msg === 'dropped a message that is not a publish job');
      expect(dropped).toHaveLength(2);
      expect(dropped[0]?.subject).toBe(bus.subjects.subject('jobs.publish'));
      expect(JSON.stringify(dropped[0]?.issues)).toContain('attempt');
      expect(JSON.stringify(dropped[1]?.issues)).toContain('not JSON');

      // Nothing is left pending (that would come back after the ack wait), nothing was redelivered.
      const info = await eventually(async () => {
        const state = await bus.jsm.consumers.info(
          bus.subjects.streamName('jobs'),
          bus.subjects.durable(CONSUMERS.publishingWorkers),
        );
        return state.num_ack_pending === 0 ? state : undefined;
      });
      expect(info.num_redelivered).toBe(0);
      expect(info.delivered.consumer_seq).toBe(3);
      const stream = await bus.jsm.streams.info(bus.subjects.streamName('jobs'));
      expect(stream.state.messages).toBe(0);
    } finally {
      await consumer.stopPulling();
      await consumer.finished;
    }
  });

  // Guarantee: a failing handler's message comes back (only a poison payload is given up on).
  it('redelivers a message whose handler failed', async () => {
    const attempts: number[] = [];
    const consumer = await consume(bus, logger, CONSUMERS.accountsWorkspaceDeleted, async (signal) => {
      attempts.push(Date.now());
      if (attempts.length === 1) throw new Error(`purge of ${signal.workspace} failed`);
    });
    try {
      const event = {
        id: 'evt_0000000000000000000000000',
        type: 'workspace.deleted',
        created_at: new Date().toISOString(),
        partner: 'acme',
        workspace: 'ws_1',
        external_id: null,
        data: {},
      };
      await bus.js.publish(bus.subjects.subject(event.type), JSON.stringify(event));
      await eventually(() => (attempts.length === 2 ? true : undefined));
    } finally {
      await consumer.stopPulling();
      await consumer.finished;
    }
  });
});
