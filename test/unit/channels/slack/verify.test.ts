import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySlackSignature } from '../../../../channels/slack/webhook/verify.js';

const SECRET = 'shh';
const NOW_MS = 1_700_000_000_000;
const BODY = '{"type":"event_callback"}';

function sign(timestamp: number, body = BODY, secret = SECRET): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

describe('verifySlackSignature', () => {
  const now = NOW_MS / 1000;
  it.each<[string, { signature?: string; timestamp?: string; body?: string }, string | true]>([
    ['a good signature', { signature: sign(now), timestamp: String(now) }, true],
    ['4 minutes old', { signature: sign(now - 240), timestamp: String(now - 240) }, true],
    ['no signature', { timestamp: String(now) }, 'missing-headers'],
    ['no timestamp', { signature: sign(now) }, 'missing-headers'],
    ['a non-numeric timestamp', { signature: sign(now), timestamp: 'soon' }, 'missing-headers'],
    ['6 minutes old', { signature: sign(now - 360), timestamp: String(now - 360) }, 'stale'],
    ['6 minutes ahead', { signature: sign(now + 360), timestamp: String(now + 360) }, 'stale'],
    ['another secret', { signature: sign(now, BODY, 'other'), timestamp: String(now) }, 'bad-signature'],
    ['a changed body', { signature: sign(now), timestamp: String(now), body: `${BODY} ` }, 'bad-signature'],
    ['a truncated signature', { signature: sign(now).slice(0, 20), timestamp: String(now) }, 'bad-signature'],
  ])('%s', (_name, input, expected) => {
    const result = verifySlackSignature({ signingSecret: SECRET, rawBody: input.body ?? BODY, signature: input.signature, timestamp: input.timestamp, nowMs: NOW_MS });
    expect(result).toEqual(expected === true ? { isValid: true } : { isValid: false, reason: expected });
  });
});
