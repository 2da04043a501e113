import { describe, expect, it } from 'vitest';
import { discordConfigSchema } from '../../../../channels/discord/config.js';

describe('discordConfigSchema', () => {
  it('defaults to disabled, the public API, every message answered in place', () => {
    expect(discordConfigSchema.parse(undefined)).toEqual({
      enabled: false,
      api_url: 'https://discord.com/api',
      mention_only: false,
      thread_mode: false,
      allowed_guilds: [],
      allowed_channels: [],
      allowed_users: [],
    });
  });

  it('lets thread_mode follow mention_only unless set', () => {
    expect(discordConfigSchema.parse({ mention_only: true }).thread_mode).toBe(true);
    expect(discordConfigSchema.parse({ mention_only: true, thread_mode: false }).thread_mode).toBe(false);
  });

  it('takes ids as strings or numbers and drops a trailing slash of api_url', () => {
    const config = discordConfigSchema.parse({ api_url: 'http://127.0.0.1:9/api/', allowed_guilds: [123], allowed_users: [' 456 '] });
    expect(config).toMatchObject({ api_url: 'http://127.0.0.1:9/api', allowed_guilds: ['123'], allowed_users: ['456'] });
  });

  it.each([
    [{ enabled: true }, 'bot_token'],
    [{ allowed_channels: ['general'] }, 'allowed_channels'],
    [{ mention_only: 'yes' }, 'mention_only'],
    [{ botToken: 'x' }, 'botToken'],
  ])('refuses %j, naming %s', (input, key) => {
    const result = discordConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain(key);
  });
});
