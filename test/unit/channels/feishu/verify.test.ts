import { describe, expect, it } from 'vitest';
import { verifyFeishuCallback } from '../../../../channels/feishu/webhook/verify.js';
import { FakeFeishu } from '../../../fakes/feishu/index.js';

const KEY = 'k-123';
const NOW = 1_700_000_000_000;
const WINDOW = 5 * 60 * 1000;

function verify(callback: { body: string; headers: Record<string, string> }, options: { token?: string; nowMs?: number } = {}) {
  return verifyFeishuCallback({
    rawBody: callback.body,
    timestamp: callback.headers['x-lark-request-timestamp'],
    nonce: callback.headers['x-lark-request-nonce'],
    signature: callback.headers['x-lark-signature'],
    encryptKey: KEY,
    ...(options.token === undefined ? {} : { verificationToken: options.token }),
    nowMs: options.nowMs ?? NOW,
    windowMs: WINDOW,
  });
}

const event = { schema: '2.0', header: { event_id: 'e1', token: 'tok', event_type: 'im.message.receive_v1' }, event: {} };

describe('verifyFeishuCallback', () => {
  it('accepts a signed body inside the window and decrypts it', () => {
    const result = verify(FakeFeishu.signedCallback(event, KEY, { timestampSeconds: NOW / 1000 }), { token: 'tok' });
    expect(result).toEqual({ isValid: true, body: event });
  });

  it('refuses signatures over other bytes, stale or future timestamps, wrong tokens', () => {
    const signed = FakeFeishu.signedCallback(event, KEY, { timestampSeconds: NOW / 1000 });
    expect(verify({ ...signed, body: signed.body.replace('}', ' }') })).toEqual({ isValid: false, reason: 'bad signature' });
    expect(verify(signed, { nowMs: NOW + WINDOW + 1000 })).toEqual({ isValid: false, reason: 'stale timestamp' });
    expect(verify(signed, { nowMs: NOW - WINDOW - 1000 })).toEqual({ isValid: false, reason: 'stale timestamp' });
    expect(verify(signed, { token: 'other' })).toEqual({ isValid: false, reason: 'bad token' });
    expect(verify({ body: signed.body, headers: {} })).toEqual({ isValid: false, reason: 'missing headers' });
  });

  it('answers an unsigned url_verification only when it decrypts under the encrypt key', () => {
    const challenge = { type: 'url_verification', challenge: 'c-1', token: 'tok' };
    const unsigned = (body: Record<string, unknown>, key = KEY) => ({ body: FakeFeishu.signedCallback(body, key, { timestampSeconds: NOW / 1000 }).body, headers: {} });
    expect(verify(unsigned(challenge), { token: 'tok' })).toEqual({ isValid: true, body: challenge });
    expect(verify(unsigned(challenge), { token: 'other' })).toEqual({ isValid: false, reason: 'bad token' });
    expect(verify(unsigned(challenge, 'not-our-key'))).toEqual({ isValid: false, reason: 'missing headers' });
    // Events always need the signature.
    expect(verify(unsigned(event), { token: 'tok' })).toEqual({ isValid: false, reason: 'missing headers' });
    expect(verify({ body: JSON.stringify(challenge), headers: {} })).toEqual({ isValid: false, reason: 'missing headers' });
  });
});
