import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { ChannelStateRepo } from '../../../src/db/repos/channel-state-repo.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

describe.each(testDatabaseKinds())('ChannelStateRepo on %s', (kind) => {
  let database: DatabaseHandle;
  let repo: ChannelStateRepo;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    repo = new ChannelStateRepo(database.db);
  });
  afterAll(() => database.close());

  it('keeps JSON values per platform and key, overwritten by set, removed by delete', async () => {
    const key = `thread:${randomUUID()}`;
    const discord = repo.forPlatform('discord');
    const slack = repo.forPlatform('slack');
    expect(await discord.get(key)).toBeUndefined();
    await discord.set(key, { threadId: '123', name: 'Résumé 👋', parts: [1, null, true] });
    await slack.set(key, 'other platform');
    expect(await discord.get(key)).toEqual({ threadId: '123', name: 'Résumé 👋', parts: [1, null, true] });
    await discord.set(key, 'replaced');
    expect(await discord.get(key)).toBe('replaced');
    await discord.delete(key);
    expect(await discord.get(key)).toBeUndefined();
    expect(await slack.get(key)).toBe('other platform');
  });

  it('lets the first of concurrent setIfAbsent calls win, and tells every caller what is stored', async () => {
    const key = `race:${randomUUID()}`;
    const state = repo.forPlatform('discord');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => state.setIfAbsent(key, `writer-${i}`)));
    const stored = await state.get(key);
    expect(typeof stored).toBe('string');
    expect(new Set(results)).toEqual(new Set([stored]));
  });
});
