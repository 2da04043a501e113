import { afterEach, describe, expect, it, vi } from 'vitest';
import { SlackNameCache } from '../../../../channels/slack/name-cache.js';

/** A users.info stand-in whose answers the test releases; counts what was asked. */
function directory() {
  const asked: string[] = [];
  const pending = new Map<string, { resolve: (name: string | undefined) => void; reject: (error: Error) => void }>();
  return {
    asked,
    lookup: (userId: string) =>
      new Promise<string | undefined>((resolve, reject) => {
        asked.push(userId);
        pending.set(userId, { resolve, reject });
      }),
    answer: (userId: string, name: string | undefined) => pending.get(userId)?.resolve(name),
    fail: (userId: string) => pending.get(userId)?.reject(new Error('missing_scope')),
  };
}

describe('SlackNameCache', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks once per member, shares a lookup under way, and keeps the name until it expires', async () => {
    let now = 0;
    const users = directory();
    const names = new SlackNameCache({ lookup: users.lookup, now: () => now, nameTtlMs: 1000 });
    const first = names.namesOf(['U1', 'U2']);
    const second = names.namesOf(['U1']);
    users.answer('U1', 'alice');
    users.answer('U2', undefined);
    expect([await first, await second]).toEqual([new Map([['U1', 'alice']]), new Map([['U1', 'alice']])]);
    now = 999;
    expect(await names.namesOf(['U1'])).toEqual(new Map([['U1', 'alice']]));
    expect(users.asked).toEqual(['U1', 'U2']);
    now = 1001;
    const renamed = names.namesOf(['U1']);
    users.answer('U1', 'alice2');
    expect(await renamed).toEqual(new Map([['U1', 'alice2']]));
    expect(users.asked).toEqual(['U1', 'U2', 'U1']);
  });

  it('remembers a failed lookup for failureTtlMs, then asks again', async () => {
    let now = 0;
    const users = directory();
    const names = new SlackNameCache({ lookup: users.lookup, now: () => now, failureTtlMs: 500 });
    const failed = names.namesOf(['U1']);
    users.fail('U1');
    expect(await failed).toEqual(new Map());
    now = 499;
    expect(await names.namesOf(['U1'])).toEqual(new Map());
    expect(users.asked).toEqual(['U1']);
    now = 501;
    const again = names.namesOf(['U1']);
    users.answer('U1', 'alice');
    expect(await again).toEqual(new Map([['U1', 'alice']]));
  });

  it('gives a message what arrived within waitMs; a later message gets the rest', async () => {
    vi.useFakeTimers();
    const users = directory();
    const names = new SlackNameCache({ lookup: users.lookup, now: () => 0, waitMs: 2000 });
    const waiting = names.namesOf(['U1', 'U2']);
    users.answer('U1', 'alice');
    await vi.advanceTimersByTimeAsync(2000);
    expect(await waiting).toEqual(new Map([['U1', 'alice']]));
    // U2 made one message wait in vain: the next does not wait for it again.
    expect(await names.namesOf(['U1', 'U2'])).toEqual(new Map([['U1', 'alice']]));
    users.answer('U2', 'bob');
    await vi.advanceTimersByTimeAsync(0);
    expect(await names.namesOf(['U1', 'U2'])).toEqual(new Map([['U1', 'alice'], ['U2', 'bob']]));
    expect(users.asked).toEqual(['U1', 'U2']);
  });

  it('keeps at most maxEntries members, dropping the oldest', async () => {
    const users = directory();
    const names = new SlackNameCache({ lookup: users.lookup, now: () => 0, maxEntries: 2 });
    for (const id of ['U1', 'U2', 'U3']) {
      const looking = names.namesOf([id]);
      users.answer(id, id.toLowerCase());
      await looking;
    }
    const again = names.namesOf(['U1', 'U3']);
    users.answer('U1', 'u1');
    expect(await again).toEqual(new Map([['U1', 'u1'], ['U3', 'u3']]));
    expect(users.asked).toEqual(['U1', 'U2', 'U3', 'U1']);
  });
});
