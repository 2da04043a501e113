/** Entries a map holds before stale ones are first looked for. */
const FIRST_SWEEP_AT = 1024;

/**
 * Forgets the stale entries of a map keyed per chat (one per chat would pile up otherwise), and
 * does so seldom however many stay live: a sweep comes when the map has grown to twice what the
 * last one left, so its cost spreads over the adds in between.
 */
export class StaleKeySweeper {
  private sweepAt = FIRST_SWEEP_AT;

  /** Call before adding to `map`: sweeps it when due, deleting the entries `isStale` names. */
  beforeAdd<K, V>(map: Map<K, V>, isStale: (value: V) => boolean): void {
    if (map.size < this.sweepAt) return;
    for (const [key, value] of map) if (isStale(value)) map.delete(key);
    this.sweepAt = Math.max(FIRST_SWEEP_AT, map.size * 2);
  }
}
