import { describe, expect, it } from 'vitest';
import { ReadCache } from '../../../src/db/read-cache.js';

/** The rows a sole process reads before each message (src/db/read-cache.ts). */
describe('ReadCache', () => {
  /** A "database" row with a counter of loads, and a gate to hold a load open. */
  const row = (initial: string) => {
    const state = { value: initial, loads: 0 };
    const load = async () => {
      state.loads += 1;
      return state.value;
    };
    return { state, load };
  };

  it('loads a key once, then answers from what it kept', async () => {
    const cache = new ReadCache<string>(10);
    const { state, load } = row('a');
    expect(await cache.read('k', load)).toBe('a');
    expect(await cache.read('k', load)).toBe('a');
    expect(state.loads).toBe(1);
  });

  it('reads the new value after a write through it, also when the write failed', async () => {
    const cache = new ReadCache<string>(10);
    const { state, load } = row('a');
    await cache.read('k', load);
    await cache.write('k', async () => {
      state.value = 'b';
    });
    expect(await cache.read('k', load)).toBe('b');
    await expect(
      cache.write('k', async () => {
        state.value = 'c';
        throw new Error('rolled back, or not: the cache cannot tell');
      }),
    ).rejects.toThrow();
    expect(await cache.read('k', load)).toBe('c');
  });

  it('does not keep a value loaded while a write was under way', async () => {
    const cache = new ReadCache<string>(10);
    const state = { value: 'old' };
    let release: (() => void) | undefined;
    // The load reads the row before the write, and answers after the write ended.
    const slowLoad = async () => {
      const seen = state.value;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return seen;
    };
    const reading = cache.read('k', slowLoad);
    await cache.write('k', async () => {
      state.value = 'new';
    });
    release?.();
    expect(await reading).toBe('old');
    expect(await cache.read('k', async () => state.value)).toBe('new');
  });

  it('keeps at most maxEntries keys, dropping the least recently used', async () => {
    const cache = new ReadCache<string>(2);
    const rows = { a: row('a'), b: row('b'), c: row('c') };
    await cache.read('a', rows.a.load);
    await cache.read('b', rows.b.load);
    await cache.read('a', rows.a.load); // a is now the most recently used
    await cache.read('c', rows.c.load); // b goes
    await cache.read('a', rows.a.load);
    await cache.read('b', rows.b.load);
    expect([rows.a.state.loads, rows.b.state.loads, rows.c.state.loads]).toEqual([1, 2, 1]);
  });

  it('keeps nothing with maxEntries 0 (more than one process on the database)', async () => {
    const cache = new ReadCache<string>(0);
    const { state, load } = row('a');
    await cache.read('k', load);
    await cache.read('k', load);
    expect(state.loads).toBe(2);
  });
});
