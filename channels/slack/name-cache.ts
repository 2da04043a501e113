import { settledWithin } from '../../src/time.js';

/**
 * Names for the `<@U…>` member and `<#C…>` channel references the model reads (issue #20).
 * Slack's events carry no name for a reference without a label, so each name is asked of Slack
 * (`users.info`, `conversations.info`) once and kept: a name for `nameTtlMs`, a failed lookup (a
 * missing scope, an unknown or deleted id, a rate limit) for `failureTtlMs`, so a message never waits on Slack
 * for a name it asked about recently. A message waits at most `waitMs` for its names; a lookup
 * that outlasted one message's wait makes no later message wait while it runs. At most
 * `maxEntries` are kept; the oldest goes first.
 */

export interface SlackNameCacheOptions {
  /** Resolves with the name of `id`, or undefined when Slack has none; may reject. */
  lookup(id: string): Promise<string | undefined>;
  now: () => number;
  /** How long a name is kept, in ms; default one hour (people and channels are renamed rarely). */
  nameTtlMs?: number;
  /** How long a failed lookup is remembered, in ms; default five minutes. */
  failureTtlMs?: number;
  /** Default 1000. */
  maxEntries?: number;
  /** How long one message waits for its names, in ms; default 2000. Later messages get what arrived. */
  waitMs?: number;
}

interface Entry {
  name: Promise<string | undefined>;
  expiresAt: number;
  isSettled: boolean;
  /** A message already waited `waitMs` for it: later ones do not wait again while it runs. */
  isSlow: boolean;
}

export class SlackNameCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: SlackNameCacheOptions) {}

  /** Names of `ids` that are known or arrive within `waitMs`; ids without one are left out. Never rejects. */
  async namesOf(ids: readonly string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    if (ids.length === 0) return names;
    const entries = ids.map((id) => ({ id, entry: this.entryOf(id) }));
    const waitedFor = entries.filter(({ entry }) => entry.isSettled || !entry.isSlow);
    const lookups = waitedFor.map(async ({ id, entry }) => {
      const name = await entry.name;
      if (name !== undefined) names.set(id, name);
    });
    if (!(await settledWithin(Promise.all(lookups), this.options.waitMs ?? 2000))) {
      for (const { entry } of waitedFor) if (!entry.isSettled) entry.isSlow = true;
    }
    // A copy: names that arrive after the wait must not change what this message read.
    return new Map(names);
  }

  private entryOf(id: string): Entry {
    const { now } = this.options;
    const cached = this.entries.get(id);
    if (cached && cached.expiresAt > now()) return cached;
    this.entries.delete(id);
    const failureTtlMs = this.options.failureTtlMs ?? 300_000;
    const entry: Entry = {
      name: this.options.lookup(id).then(
        (name) => {
          entry.isSettled = true;
          entry.expiresAt = now() + (this.options.nameTtlMs ?? 3_600_000);
          return name;
        },
        () => {
          entry.isSettled = true;
          entry.expiresAt = now() + failureTtlMs;
          return undefined;
        },
      ),
      // While the lookup runs, every message asking shares it; one that hangs is given up like a failure.
      expiresAt: now() + failureTtlMs,
      isSettled: false,
      isSlow: false,
    };
    this.entries.set(id, entry);
    const maxEntries = this.options.maxEntries ?? 1000;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= maxEntries) break;
      this.entries.delete(oldest);
    }
    return entry;
  }
}
