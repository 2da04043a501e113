import { and, eq, sql } from 'drizzle-orm';
import type { ChannelStateStore, JsonValue } from '../../channel/types.js';
import type { Database } from '../index.js';
import { channelState } from '../schema/index.js';
import { jsonbSafe } from './follow-ups-repo.js';

/** Adapters' small durable state (`ChannelDeps.state`), per platform and key. */
export class ChannelStateRepo {
  constructor(private readonly db: Database) {}

  /** One platform's view; keys of other platforms are out of its reach. */
  forPlatform(platform: string): ChannelStateStore {
    return {
      get: (key) => this.get(platform, key),
      set: (key, value) => this.set(platform, key, value),
      setIfAbsent: (key, value) => this.setIfAbsent(platform, key, value),
      delete: (key) => this.delete(platform, key),
    };
  }

  async get(platform: string, key: string): Promise<JsonValue | undefined> {
    const [row] = await this.db
      .select({ value: channelState.value })
      .from(channelState)
      .where(and(eq(channelState.platform, platform), eq(channelState.key, key)));
    return row?.value as JsonValue | undefined;
  }

  async set(platform: string, key: string, value: JsonValue): Promise<void> {
    const stored = jsonbSafe(value);
    await this.db
      .insert(channelState)
      .values({ platform, key, value: stored })
      .onConflictDoUpdate({ target: [channelState.platform, channelState.key], set: { value: stored, updatedAt: sql`now()` } });
  }

  /** Stores `value` unless the key has one; resolves with the value that is stored now (the first writer wins). */
  async setIfAbsent(platform: string, key: string, value: JsonValue): Promise<JsonValue> {
    const inserted = await this.db
      .insert(channelState)
      .values({ platform, key, value: jsonbSafe(value) })
      .onConflictDoNothing()
      .returning({ value: channelState.value });
    if (inserted[0]) return inserted[0].value as JsonValue;
    return (await this.get(platform, key)) as JsonValue;
  }

  async delete(platform: string, key: string): Promise<void> {
    await this.db.delete(channelState).where(and(eq(channelState.platform, platform), eq(channelState.key, key)));
  }
}
