import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { telegramConfigSchema } from '../../../../channels/telegram/config.js';

function issues(input: unknown): string[] {
  const result = telegramConfigSchema.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('telegramConfigSchema', () => {
  it('defaults to a disabled channel on the public Bot API', () => {
    expect(telegramConfigSchema.parse(undefined)).toEqual({
      enabled: false,
      api_root: 'https://api.telegram.org',
      allowed_users: [],
      polling_timeout_seconds: 30,
    });
  });

  it('accepts a full config and normalizes it', () => {
    expect(
      telegramConfigSchema.parse({
        enabled: true,
        bot_token: '123:abc',
        api_root: 'http://127.0.0.1:8081//',
        allowed_users: [42, '43', ' -7 '],
        polling_timeout_seconds: 1,
      }),
    ).toEqual({
      enabled: true,
      bot_token: '123:abc',
      api_root: 'http://127.0.0.1:8081',
      allowed_users: [42, 43, -7],
      polling_timeout_seconds: 1,
    });
  });

  it('requires bot_token when enabled, naming the key', () => {
    expect(issues({ enabled: true })).toEqual(['bot_token: required when the Telegram channel is enabled']);
    expect(issues({ enabled: true, bot_token: '  ' })).toHaveLength(1);
    expect(issues({ enabled: false })).toEqual([]);
  });

  it.each([
    [['alice'], 'allowed_users.0: must be a numeric Telegram user id'],
    [[1, '@bob'], 'allowed_users.1: must be a numeric Telegram user id'],
    [[1.5], 'allowed_users.0: must be a numeric Telegram user id'],
    [[true], 'allowed_users.0: must be a numeric Telegram user id'],
  ])('rejects allowed_users %j with a clear message', (allowed, message) => {
    const found = issues({ allowed_users: allowed });
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(message);
  });

  it.each([
    [{ api_root: 'not a url' }, 'api_root'],
    [{ polling_timeout_seconds: 0 }, 'polling_timeout_seconds'],
    [{ polling_timeout_seconds: 1.5 }, 'polling_timeout_seconds'],
    [{ token: 'typo' }, ''],
  ])('rejects %j', (input, path) => {
    const found = issues(input);
    expect(found).toHaveLength(1);
    expect(found[0]?.startsWith(`${path}:`)).toBe(true);
  });

  it('describes every field', () => {
    const json = z.toJSONSchema(telegramConfigSchema, { io: 'input' }) as {
      properties: Record<string, { description?: string }>;
    };
    expect(Object.keys(json.properties).sort()).toEqual(
      ['allowed_users', 'api_root', 'bot_token', 'enabled', 'polling_timeout_seconds'].sort(),
    );
    for (const [key, property] of Object.entries(json.properties)) {
      expect(property.description, key).toMatch(/\w/);
    }
  });
});
