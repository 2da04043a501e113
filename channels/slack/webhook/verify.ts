import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Slack's request signature (https://docs.slack.dev/authentication/verifying-requests-from-slack):
 * `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>")>`, with
 * `X-Slack-Request-Timestamp` in seconds, refused when more than 5 minutes from `nowMs`.
 *
 * Written beside Bolt's `verifySlackRequest` rather than calling it: Bolt accepts timestamps from
 * the future without bound (only the past is checked) and throws text meant for logs; this is a
 * pure boolean with an injected clock, and the `webhook/` folder stays free of the SDK.
 */

export interface SignedRequest {
  signingSecret: string;
  rawBody: string;
  signature: string | undefined;
  timestamp: string | undefined;
  /** Milliseconds since the epoch. */
  nowMs: number;
  /** Default 5 minutes. */
  maxAgeMs?: number;
}

export type VerifyResult = { isValid: true } | { isValid: false; reason: 'missing-headers' | 'stale' | 'bad-signature' };

const DEFAULT_MAX_AGE_MS = 5 * 60 * 1000;

/**
 * What the headers alone can refuse, before the body is read: a missing signature or timestamp,
 * a timestamp that is not whole seconds, or one more than `maxAgeMs` from `nowMs`. Pure.
 */
export function checkSlackHeaders(request: Omit<SignedRequest, 'signingSecret' | 'rawBody'>): VerifyResult {
  const { signature, timestamp } = request;
  if (signature === undefined || timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) {
    return { isValid: false, reason: 'missing-headers' };
  }
  if (Math.abs(request.nowMs - Number(timestamp) * 1000) > (request.maxAgeMs ?? DEFAULT_MAX_AGE_MS)) {
    return { isValid: false, reason: 'stale' };
  }
  return { isValid: true };
}

/** Checks a request's Slack signature (pure; constant-time comparison). */
export function verifySlackSignature(request: SignedRequest): VerifyResult {
  const headers = checkSlackHeaders(request);
  if (!headers.isValid) return headers;
  const { signature, timestamp } = request as SignedRequest & { signature: string; timestamp: string };
  const expected = Buffer.from(`v0=${createHmac('sha256', request.signingSecret).update(`v0:${timestamp}:${request.rawBody}`).digest('hex')}`);
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { isValid: false, reason: 'bad-signature' };
  return { isValid: true };
}
