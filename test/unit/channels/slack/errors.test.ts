import { describe, expect, it } from 'vitest';
import { notRunningReason, toChannelError } from '../../../../channels/slack/errors.js';
import { ChannelError } from '../../../../src/errors.js';

/** Shapes @slack/web-api throws, by their documented `code`. */
const platform = (error: string) => ({ code: 'slack_webapi_platform_error', data: { ok: false, error } });

describe('toChannelError', () => {
  it.each<[string, unknown, { code: string; retryAfterMs?: number }]>([
    ['a rate-limited call', { code: 'slack_webapi_rate_limited_error', retryAfter: 3 }, { code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 3000 }],
    ['an HTTP 429', { code: 'slack_webapi_http_error', statusCode: 429, headers: { 'retry-after': '2' } }, { code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 2000 }],
    ['ratelimited', platform('ratelimited'), { code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 1000 }],
    ['invalid_auth', platform('invalid_auth'), { code: 'CHANNEL_UNAUTHORIZED' }],
    ['token_revoked', platform('token_revoked'), { code: 'CHANNEL_UNAUTHORIZED' }],
    ['channel_not_found', platform('channel_not_found'), { code: 'CHANNEL_REJECTED' }],
    ['an HTTP 503', { code: 'slack_webapi_http_error', statusCode: 503, headers: {} }, { code: 'CHANNEL_UNAVAILABLE' }],
    ['a network failure', { code: 'slack_webapi_request_error', original: new Error('ECONNREFUSED') }, { code: 'CHANNEL_UNAVAILABLE' }],
    ['a stranger', new TypeError('boom'), { code: 'CHANNEL_UNAVAILABLE' }],
  ])('maps %s', (_name, error, expected) => {
    const mapped = toChannelError(error, 'chat.update');
    expect(mapped).toBeInstanceOf(ChannelError);
    expect(mapped).toMatchObject({ platform: 'slack', ...expected });
    expect(mapped.message).toContain('chat.update');
  });

  it('says why start failed without secrets', () => {
    expect(notRunningReason(platform('invalid_auth'))).toBe('Slack rejected a token (invalid_auth)');
  });
});
