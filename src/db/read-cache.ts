/**
 * A bounded read-through cache of rows that only this process writes. On the embedded database
 * (PGlite) no other process opens the data dir, so a row this process read stays true until this
 * process changes it, and a read that runs before every message (a conversation's thread, a
 * person's memory) need not cost a statement each time (issue #14). With more than one process on
 * the database, build it with `maxEntries` 0: it then caches nothing and every read loads.
 *
 * Every write of a cached row goes through {@link ReadCache.write}. A read that was under way
 * while any write ran is not kept, since it may have seen the row from before the write. Values
 * are shared between callers: treat them as read-only. At most `maxEntries` keys are kept, the
 * least recently used dropped first, so the cache stops growing however many keys there are.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, V>();
  /** Bumped as each write ends: a load that saw it change keeps nothing. */
  private writesEnded = 0;

  constructor(private readonly maxEntries: number) {}

  /** The value of `key`: the kept one, else `load()`'s (kept unless a write ended meanwhile). */
  async read(key: string, load: () => Promise<V>): Promise<V> {
    if (this.entries.has(key)) {
      const value = this.entries.get(key) as V;
      // Re-inserted: the Map's order is the recency order.
      this.entries.delete(key);
      this.entries.set(key, value);
      return value;
    }
    const writesBefore = this.writesEnded;
    const value = await load();
    if (this.writesEnded === writesBefore) this.keep(key, value);
    return value;
  }

  /** Runs `write`, a change to the row of `key`; whether it succeeds or not, the kept value is dropped. */
  async write<T>(key: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.writesEnded += 1;
      this.entries.delete(key);
    }
  }

  private keep(key: string, value: V): void {
    if (this.maxEntries <= 0) return;
    this.entries.set(key, value);
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
  }
}
