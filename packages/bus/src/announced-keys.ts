import type { Subject } from './catalog.ts';
import type { Bus } from './connection.ts';

/**
 * The keys that announcements on these subjects are about, for a cache to drop (LocalCache's
 * `dropOn` in @svc/cache). A plain NATS subscription, not a durable consumer: a replica that was
 * down has no entries to drop. An announcement that does not parse, or names no key, drops nothing.
 */
export function announcedKeys<P>(
  bus: Bus,
  subjects: readonly Pick<Subject<P>, 'name' | 'schema'>[],
  keyOf: (payload: P) => string | undefined,
): (changed: (key: string) => void) => { unsubscribe(): void } {
  return (changed) => {
    const subscriptions = subjects.map((subject) =>
      bus.nc.subscribe(bus.subjects.subject(subject.name), {
        callback: (error, message) => {
          if (error) return;
          const parsed = subject.schema.safeParse(jsonOf(message.data));
          const key = parsed.success ? keyOf(parsed.data) : undefined;
          if (key !== undefined) changed(key);
        },
      }),
    );
    return {
      unsubscribe: () => {
        for (const subscription of subscriptions) subscription.unsubscribe();
      },
    };
  };
}

function jsonOf(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data).toString());
  } catch {
    return undefined;
  }
}
