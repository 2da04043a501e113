import { describe, expect, it } from 'vitest';
import { slackConfigSchema, slackModeOf } from '../../../../channels/slack/config.js';

describe('slackConfigSchema', () => {
  it('defaults to disabled with the public API root', () => {
    expect(slackConfigSchema.parse(undefined)).toMatchObject({ enabled: false, api_url: 'https://slack.com/api/', allowed_users: [], native_streaming: true });
  });

  it('adds the trailing slash to api_url and takes one allowed user as a string', () => {
    const config = slackConfigSchema.parse({ enabled: true, bot_token: 'xoxb-1', app_token: 'xapp-1', api_url: 'http://127.0.0.1:9/api', allowed_users: 'U123' });
    expect(config).toMatchObject({ api_url: 'http://127.0.0.1:9/api/', allowed_users: ['U123'] });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no bot token', { enabled: true, app_token: 'xapp-1' }, 'bot_token'],
    ['socket without app token', { enabled: true, bot_token: 'xoxb-1', mode: 'socket', signing_secret: 's' }, 'app_token'],
    ['http without signing secret', { enabled: true, bot_token: 'xoxb-1', mode: 'http' }, 'signing_secret'],
    ['a display name as user', { allowed_users: ['alice'] }, 'allowed_users'],
  ])('refuses %s', (_name, input, path) => {
    const result = slackConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path[0])).toContain(path);
  });

  it.each<[Record<string, unknown>, 'socket' | 'http']>([
    [{ app_token: 'xapp-1' }, 'socket'],
    [{ signing_secret: 's' }, 'http'],
    [{ app_token: 'xapp-1', signing_secret: 's' }, 'socket'],
    [{ app_token: 'xapp-1', signing_secret: 's', mode: 'http' }, 'http'],
  ])('infers the transport from %j', (input, mode) => {
    expect(slackModeOf(input)).toBe(mode);
  });
});
