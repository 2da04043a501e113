/**
 * Display names of workspace members for the `<@U…>` mentions the model reads (issue #20).
 * Slack's events carry no names for a mention picked without a label, so each name is asked of
 * `users.info` once and kept: a name for `nameTtlMs`, a failed lookup (no `users:read` scope, an
 * unknown or deleted member, a rate limit) for `failureTtlMs`, so a message never waits on Slack
 * for a name it asked about recently. At most `maxEntries` are kept; the oldest goes first.
 */

export interface SlackUserNamesOptions {
  /** Resolves with the member's display name, or undefined when Slack has none; may reject. */
  lookup(userId: string): Promise<string | undefined>;
  now: () => number;
  /** How long a name is kept, in ms; default one hour (people rename themselves rarely). */
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
}

export class SlackUserNames {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: SlackUserNamesOptions) {}

  /** Names of `userIds` that are known or arrive within `waitMs`; ids without one are left out. Never rejects. */
  async namesOf(userIds: readonly string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    if (userIds.length === 0) return names;
    const lookups = userIds.map(async (id) => {
      const name = await this.entryOf(id).name;
      if (name !== undefined) names.set(id, name);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.waitMs ?? 2000);
    });
    await Promise.race([Promise.all(lookups), deadline]);
    clearTimeout(timer);
    return new Map(names);
  }

  private entryOf(userId: string): Entry {
    const { now } = this.options;
    const cached = this.entries.get(userId);
    if (cached && cached.expiresAt > now()) return cached;
    this.entries.delete(userId);
    const entry: Entry = {
      name: this.options.lookup(userId).then(
        (name) => {
          entry.expiresAt = now() + (this.options.nameTtlMs ?? 3_600_000);
          return name;
        },
        () => {
          entry.expiresAt = now() + (this.options.failureTtlMs ?? 300_000);
          return undefined;
        },
      ),
      // While the lookup runs, every message asking shares it.
      expiresAt: Number.POSITIVE_INFINITY,
    };
    this.entries.set(userId, entry);
    const maxEntries = this.options.maxEntries ?? 1000;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= maxEntries) break;
      this.entries.delete(oldest);
    }
    return entry;
  }
}
