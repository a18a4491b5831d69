import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from '@svc/logging';
import { z } from 'zod';
import { IN_ORDER, type StreamKey } from './catalog.ts';
import type { Bus } from './connection.ts';
import { consume, type RunningConsumer } from './consumer.ts';
import type { EventEnvelope } from './envelope.ts';
import { LocalCache } from './local-cache.ts';
import { eventRow, type OutboxRow } from './outbox.ts';

// The untyped forms publishing still calls until it moves to the catalog (CONSUMERS, SUBJECTS),
// LocalCache and eventRow. Each is a thin adapter over those; delete this file once unused.

/** @deprecated use `consume` with a `CONSUMERS` entry (typed, validated payloads). */
export async function runConsumer(
  bus: Bus,
  logger: Logger,
  options: {
    stream: StreamKey;
    durable: string;
    types?: string[];
    ackWaitMs?: number;
    maxDeliver?: number;
    concurrency?: number;
  },
  handle: (type: string, payload: unknown, message: JsMsg) => Promise<void>,
): Promise<RunningConsumer & { stop(): Promise<void> }> {
  if ((options.types?.length ?? 0) > 1) throw new Error('runConsumer reads one type; use consume');
  const settings = { ...IN_ORDER, ...definedOnly(options) };
  const subject = {
    name: options.types?.[0] ?? '>',
    stream: options.stream,
    schema: z.unknown(),
    payload: 'JSON',
    settings,
  };
  const running = await consume(bus, logger, { durable: options.durable, subject }, (payload, message) =>
    handle(bus.subjects.typeOf(message.subject), payload, message),
  );
  return {
    ...running,
    async stop() {
      await running.stopPulling();
      await running.finished;
    },
  };
}

function definedOnly(options: { ackWaitMs?: number; maxDeliver?: number; concurrency?: number }) {
  const { ackWaitMs, maxDeliver, concurrency } = options;
  return Object.fromEntries(
    Object.entries({ ackWaitMs, maxDeliver, concurrency }).filter(([, value]) => value !== undefined),
  );
}

/** @deprecated use `LocalCache` with `dropOn(bus, SUBJECTS..., keyOf)`. */
export class AnnouncedCache<V> extends LocalCache<V> {
  constructor(
    bus: Bus,
    options: {
      types: readonly string[];
      keyOf: (payload: unknown) => string | undefined;
      load: (key: string) => Promise<V>;
      maxAgeMs: number;
      now?: () => number;
    },
  ) {
    super({ load: options.load, maxAgeMs: options.maxAgeMs, now: options.now });
    this.dropOn(
      bus,
      options.types.map((name) => ({ name, schema: z.unknown() })),
      options.keyOf,
    );
  }
}

/** @deprecated use `eventRow(event)`, which reads the current request id itself. */
export function outboxRowFor(event: EventEnvelope, requestId?: string): OutboxRow {
  return { ...eventRow(event), requestId: requestId ?? null };
}
