import { Client, DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { discordCodeOf, toChannelError } from '../../../../channels/discord/errors.js';
import { ChannelError } from '../../../../src/errors.js';

function apiError(status: number, code: number, message: string): DiscordAPIError {
  return new DiscordAPIError({ code, message }, code, status, 'POST', 'http://127.0.0.1/api/v10/channels/1/messages', {
    body: { content: 'secret text' },
  });
}

describe('toChannelError', () => {
  it.each([
    [401, 0, 'CHANNEL_UNAUTHORIZED'],
    [403, 50013, 'CHANNEL_REJECTED'],
    [404, 10008, 'CHANNEL_REJECTED'],
    [400, 50035, 'CHANNEL_REJECTED'],
    [413, 40005, 'FILE_TOO_LARGE'],
    [500, 0, 'CHANNEL_UNAVAILABLE'],
  ])('maps HTTP %i (code %i) to %s, keeping the code and not the body', (status, code, expected) => {
    const error = toChannelError(apiError(status, code, 'Nope'));
    expect(error).toMatchObject({ code: expected, platform: 'discord' });
    expect(discordCodeOf(error)).toBe(code);
    expect(error.message).toContain('/api/v10/channels/1/messages');
    expect(JSON.stringify({ message: error.message, cause: error.cause })).not.toContain('secret text');
  });

  it('gives a rate limit its wait', () => {
    const limited = new RateLimitError({
      timeToReset: 1500,
      limit: 5,
      method: 'POST',
      hash: 'h',
      url: 'u',
      route: '/channels/:id/messages',
      majorParameter: '1',
      global: false,
      retryAfter: 1500,
      sublimitTimeout: 0,
      scope: 'user',
    });
    expect(toChannelError(limited)).toMatchObject({ code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 1500 });
  });

  it('maps a refused token at login, HTTP errors and strangers', async () => {
    const client = new Client({ intents: [] });
    // discord.js throws the same TokenInvalid error for an empty token as for a 401 at gateway/bot.
    const tokenInvalid = await client.login('').catch((error: unknown) => error);
    await client.destroy();
    expect(toChannelError(tokenInvalid)).toMatchObject({ code: 'CHANNEL_UNAUTHORIZED' });
    expect(toChannelError(new HTTPError(502, 'Bad Gateway', 'GET', 'http://x/api/v10/gateway/bot', { body: undefined }))).toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    const socketClosed = Object.assign(new Error('other side closed'), { name: 'SocketError', code: 'UND_ERR_SOCKET' });
    const stranger = toChannelError(new TypeError('fetch failed', { cause: socketClosed }));
    expect(stranger).toBeInstanceOf(ChannelError);
    expect(stranger).toMatchObject({
      code: 'CHANNEL_UNAVAILABLE',
      message: 'Discord call failed (TypeError: fetch failed; cause SocketError: other side closed)',
      cause: { name: 'TypeError', code: 'UND_ERR_SOCKET' },
    });
    const quoting = toChannelError(new Error('request to https://discord.com/api/webhooks/1/abc?token=s3cr3t-value failed'));
    expect(quoting.message).not.toContain('s3cr3t-value');
  });
});
