interface LocalCacheOptions<V> {
  /** Never keep an entry longer than this, even if the announcement of a change was missed. */
  maxAgeMs: number;
  /** At most this many entries; the least recently used go first. */
  maxEntries?: number;
  /**
   * At most this many bytes of values, as `sizeOf` counts them; the least recently used go first,
   * and a value larger than an eighth of the budget is not kept (it would push out many others).
   */
  maxBytes?: number;
  sizeOf?: (value: V) => number;
  /** Loads what `get` misses. A failed load is not kept: the next caller asks again. */
  load?: (key: string) => Promise<V>;
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * Where an owner's announcements of changes come from: it calls `changed` with the key of each
 * changed value until unsubscribed (see `announcedKeys` in @svc/bus for the NATS one).
 */
type Announcements = (changed: (key: string) => void) => { unsubscribe(): void };

interface Entry<V> {
  value: V;
  at: number;
  bytes: number;
}

/**
 * Values kept in this process's memory, bounded in entries (or bytes) and in age. Values another
 * service owns are dropped when the owner announces a change (an event it writes through its
 * outbox, see `dropOn`), so a change goes unseen only for the moment its announcement takes to
 * arrive. Owned by one service object, which closes it.
 */
export class LocalCache<V> {
  /** In order of use, least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V>>();
  private readonly subscriptions: { unsubscribe(): void }[] = [];
  private readonly now: () => number;
  private readonly maxEntries: number;
  private bytes = 0;

  constructor(private readonly options: LocalCacheOptions<V>) {
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  }

  /** Drops the entry of each key announced as changed, until the cache is closed. */
  dropOn(announcements: Announcements): this {
    this.subscriptions.push(announcements((key) => this.forget(key)));
    return this;
  }

  /** The kept value, or undefined when it is missing or too old. */
  peek(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (this.now() - entry.at >= this.options.maxAgeMs) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  /** The kept value, else the loader's (callers asking meanwhile share one load). */
  get(key: string): Promise<V> {
    const kept = this.peek(key);
    if (kept !== undefined) return Promise.resolve(kept);
    return this.loading.get(key) ?? this.startLoading(key);
  }

  set(key: string, value: V): void {
    this.forget(key);
    this.keep(key, value, this.now());
  }

  /** Drops the key, and the result of a load of it in flight (it may predate the change). */
  forget(key: string): void {
    this.loading.delete(key);
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Drops every entry (and load in flight) whose key passes the test. */
  forgetWhere(test: (key: string) => boolean): void {
    for (const key of [...this.entries.keys(), ...this.loading.keys()]) if (test(key)) this.forget(key);
  }

  /** Entries kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes kept now, as `sizeOf` counts them (0 without it). */
  get keptBytes(): number {
    return this.bytes;
  }

  close(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions.length = 0;
    this.entries.clear();
    this.loading.clear();
    this.bytes = 0;
  }

  private startLoading(key: string): Promise<V> {
    const { load } = this.options;
    if (!load) return Promise.reject(new Error('this cache has no loader: use peek and set'));
    const at = this.now();
    const value = load(key);
    this.loading.set(key, value);
    const settled = () => {
      if (this.loading.get(key) !== value) return false;
      this.loading.delete(key);
      return true;
    };
    value.then(
      (loaded) => settled() && this.keep(key, loaded, at),
      () => settled(),
    );
    return value;
  }

  private keep(key: string, value: V, at: number): void {
    const bytes = this.options.sizeOf?.(value) ?? 0;
    const { maxBytes = Number.POSITIVE_INFINITY } = this.options;
    if (bytes > maxBytes / 8) return;
    const replaced = this.entries.get(key);
    if (replaced) this.bytes -= replaced.bytes;
    this.entries.delete(key);
    this.entries.set(key, { value, at, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}
