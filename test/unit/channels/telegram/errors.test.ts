import { GrammyError, HttpError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { isMessageNotModified, notRunningReason, toChannelError } from '../../../../channels/telegram/errors.js';
import { ChannelError } from '../../../../src/errors.js';

const SECRET_TEXT = 'my private message text';

function grammyError(errorCode: number, description: string, retryAfter?: number): GrammyError {
  return new GrammyError(
    "Call to 'sendMessage' failed!",
    {
      ok: false,
      error_code: errorCode,
      description,
      ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } }),
    },
    'sendMessage',
    { chat_id: 1, text: SECRET_TEXT },
  );
}

describe('toChannelError', () => {
  it.each([
    [429, 'Too Many Requests: retry after 7', 7, 'CHANNEL_RATE_LIMITED', 7000],
    [401, 'Unauthorized', undefined, 'CHANNEL_UNAUTHORIZED', undefined],
    [400, 'Bad Request: message text is empty', undefined, 'CHANNEL_REJECTED', undefined],
    [403, 'Forbidden: bot was blocked by the user', undefined, 'CHANNEL_REJECTED', undefined],
    [404, 'Not Found', undefined, 'CHANNEL_UNAVAILABLE', undefined],
    [409, 'Conflict: terminated by other getUpdates request', undefined, 'CHANNEL_UNAVAILABLE', undefined],
    [500, 'Internal Server Error', undefined, 'CHANNEL_UNAVAILABLE', undefined],
    [502, 'Bad Gateway', undefined, 'CHANNEL_UNAVAILABLE', undefined],
  ])('%d → %s', (errorCode, description, retryAfter, code, retryAfterMs) => {
    const error = toChannelError(grammyError(errorCode, description, retryAfter));
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ platform: 'telegram', code, retryAfterMs });
    expect(error.message).toContain(String(errorCode));
    expect(error.userMessage).toBeUndefined();
  });

  it('assumes a short wait for a 429 without retry_after', () => {
    expect(toChannelError(grammyError(429, 'Too Many Requests')).retryAfterMs).toBe(1000);
  });

  it('maps network failures to CHANNEL_UNAVAILABLE', () => {
    const error = toChannelError(new HttpError("Network request for 'sendMessage' failed!", new Error('ECONNREFUSED')));
    expect(error).toMatchObject({ code: 'CHANNEL_UNAVAILABLE', platform: 'telegram' });
  });

  it('maps strangers to CHANNEL_UNAVAILABLE without their message', () => {
    const error = toChannelError(new TypeError(SECRET_TEXT));
    expect(error.code).toBe('CHANNEL_UNAVAILABLE');
    expect(error.message).not.toContain(SECRET_TEXT);
  });

  it('passes a ChannelError through', () => {
    const original = new ChannelError('telegram', 'CHANNEL_REJECTED', 'x');
    expect(toChannelError(original)).toBe(original);
  });

  it('never carries the message text or the request payload', () => {
    const error = toChannelError(grammyError(400, 'Bad Request: message is too long'));
    const everything = JSON.stringify({ message: error.message, cause: error.cause, error });
    expect(everything).not.toContain(SECRET_TEXT);
    expect(error.cause).not.toBeInstanceOf(GrammyError);
  });
});

describe('isMessageNotModified', () => {
  it('recognizes only the 400 "message is not modified" answer', () => {
    const notModified =
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';
    expect(isMessageNotModified(grammyError(400, notModified))).toBe(true);
    expect(isMessageNotModified(grammyError(400, 'Bad Request: message to edit not found'))).toBe(false);
    expect(isMessageNotModified(new Error(notModified))).toBe(false);
  });
});

describe('notRunningReason', () => {
  it('explains a rejected token without the token', () => {
    expect(notRunningReason(grammyError(401, 'Unauthorized'), 'start')).toBe(
      'Telegram rejected the bot token (401 Unauthorized)',
    );
  });

  it('explains a second poller', () => {
    expect(notRunningReason(grammyError(409, 'Conflict: terminated by other getUpdates request'), 'polling')).toContain(
      '409 Conflict',
    );
  });

  it('names the phase for other failures', () => {
    expect(notRunningReason(grammyError(500, 'Internal Server Error'), 'polling')).toMatch(/^Telegram polling stopped: /);
  });
});
