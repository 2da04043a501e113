import { describe, expect, it } from 'vitest';
import { dingtalkConfigSchema } from '../../../../channels/dingtalk/config.js';

describe('dingtalkConfigSchema', () => {
  it('defaults to disabled, the production API, no card template and everyone allowed', () => {
    expect(dingtalkConfigSchema.parse({})).toEqual({ enabled: false, api_url: 'https://api.dingtalk.com', card_template_id: '', allowed_users: [] });
  });

  it('accepts one allowed user as a string and trims a trailing slash of api_url', () => {
    expect(dingtalkConfigSchema.parse({ allowed_users: 'staff1', api_url: 'http://127.0.0.1:9/' })).toMatchObject({
      allowed_users: ['staff1'],
      api_url: 'http://127.0.0.1:9',
    });
  });

  it('rejects unknown keys', () => {
    expect(dingtalkConfigSchema.safeParse({ app_key: 'x' }).success).toBe(false);
  });
});
