import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/errors.js';
import { redactSecrets } from '../../src/redact.js';

describe('redactSecrets', () => {
  it.each([
    // OpenAI's 401 text, as its API sends it.
    [
      'Incorrect API key provided: sk-proj-AbCd************************************wXyZ. You can find your API key at https://platform.openai.com/account/api-keys.',
      'AbCd',
    ],
    ['401 Incorrect API key provided: my-local-key-1234.', 'my-local-key-1234'],
    ['request failed: Authorization: Bearer abcdef123456SECRET', 'abcdef123456SECRET'],
    ['connect ECONNREFUSED postgres://deerflow:hunter2pass@db:5432/x', 'hunter2pass'],
    ['invalid_auth for xoxb-1234567890-abcdefghij', 'abcdefghij'],
    ['GET /bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/getMe failed', 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0'],
    ['{"api_key": "plain-secret-value", "model": "gpt"}', 'plain-secret-value'],
    ['token=ghs_16C7e42F292c6912E7710c838347Ae178B4a&x=1', '16C7e42F292c6912E7710c838347Ae178B4a'],
    [JSON.stringify({ message: JSON.stringify({ client_secret: 'nested-secret' }) }), 'nested-secret'],
  ])('masks the secret in %s', (text, secret) => {
    expect(redactSecrets(text)).not.toContain(secret);
  });

  it('keeps texts without secrets as they are, and JSON as JSON', () => {
    const plain = 'run 6f1c2f8e-8d47-4a53-9e37-0b1b2c3d4e5f failed: ECONNREFUSED 127.0.0.1:8080 (HTTP 502)';
    expect(redactSecrets(plain)).toBe(plain);
    const json = JSON.stringify({ error: { message: 'Incorrect API key provided: sk-abc***xyz1.', token: 'tok-1234567' } });
    expect(() => JSON.parse(redactSecrets(json))).not.toThrow();
  });

  it('is applied by describeError to a stranger error', () => {
    const error = Object.assign(new Error('401 Incorrect API key provided: sk-live-***9f3k.'), { status: 401 });
    expect(describeError(error).message).not.toContain('9f3k');
  });
});
