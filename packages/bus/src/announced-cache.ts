import type { Bus } from './connection.ts';

export interface AnnouncedCacheOptions<V> {
  /** The event types whose announcement drops an entry (on their NATS subjects, this bus's prefix). */
  types: readonly string[];
  /** The key an announcement is about, from its JSON payload (an event envelope). */
  keyOf: (payload: unknown) => string | undefined;
  load: (key: string) => Promise<V>;
  /** Never keep an entry longer than this, even if an announcement of a change was missed. */
  maxAgeMs: number;
  now?: () => number;
}

/** At this many entries the cache starts over (a bound on memory, not an eviction policy). */
const MAX_ENTRIES = 10_000;

/**
 * Values that another service owns, loaded on demand and kept until the owner announces a change
 * (an event it writes through its outbox) or `maxAgeMs` passes. A plain NATS subscription drops the
 * entry when the announcement arrives, so a change goes unseen only for the moment its
 * announcement takes to arrive. A failed load is not kept: the next caller asks again.
 */
export class AnnouncedCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; at: number }>();
  private readonly subscriptions: ReturnType<Bus['nc']['subscribe']>[];
  private readonly now: () => number;

  constructor(
    bus: Bus,
    private readonly options: AnnouncedCacheOptions<V>,
  ) {
    this.now = options.now ?? Date.now;
    this.subscriptions = options.types.map((type) =>
      bus.nc.subscribe(bus.subjects.subject(type), {
        callback: (error, message) => {
          if (error) return;
          const key = options.keyOf(parsed(message.data));
          if (key) this.forget(key);
        },
      }),
    );
  }

  get(key: string): Promise<V> {
    const cached = this.entries.get(key);
    if (cached && this.now() - cached.at < this.options.maxAgeMs) return cached.value;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    const value = this.options.load(key);
    this.entries.set(key, { value, at: this.now() });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.forget(key);
    });
    return value;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  close(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }
}

function parsed(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data).toString());
  } catch {
    return undefined;
  }
}
