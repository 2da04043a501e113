import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { ErrorCode } from '../../src/errors.js';
import type { ErrorBody } from '../../src/gateway/error-handler.js';

/**
 * What the GitHub webhook decides before and while it reads a body, so that a request that cannot
 * be a delivery costs a header parse, not 25 MB of memory (issue #13: 48 unsigned 24.9 MB posts
 * took the server from 534 MB to 1,588 MB when every body was buffered before the check).
 */

/**
 * "Payloads are capped at 25 MB. If your event generates a larger payload, a webhook will not be
 * fired." (https://docs.github.com/en/webhooks/webhook-events-and-payloads). Anything larger is not
 * from GitHub and gets 413 before it is read further.
 */
export const GITHUB_WEBHOOK_BODY_LIMIT_BYTES = 25 * 1024 * 1024;
/** A body above this (or of unknown length) needs one of the {@link GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT} slots. Real deliveries are a few KB to a few hundred. */
export const GITHUB_WEBHOOK_LARGE_BODY_BYTES = 1024 * 1024;
/** Large bodies read at once; with the limit above, at most 100 MB of webhook bodies are ever held. */
export const GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT = 4;
/**
 * Bytes of bodies up to 1 MB read at once, by their `Content-Length`: a flood of small posts under
 * made-up signatures cannot add up either. 64 MiB is some 3,800 typical 17 KiB deliveries in flight.
 */
export const GITHUB_WEBHOOK_SMALL_BODIES_IN_FLIGHT_BYTES = 64 * 1024 * 1024;
/** `Retry-After` of a 503 for a body while its budget is used up. */
export const GITHUB_WEBHOOK_BUSY_RETRY_AFTER_SECONDS = 5;

/** The texts callers read, exactly as reference §7.1 words them where it does (config keys are ours). */
export const githubWebhookMessages = {
  notConfigured:
    'Webhook signature verification not configured. Set channels.github.webhook_secret or channels.github.allow_unverified: true for unverified dev mode.',
  badSignature: 'Invalid or missing X-Hub-Signature-256',
  missingEvent: 'Missing X-GitHub-Event header',
  invalidJson: 'Invalid JSON body',
  unsupportedMediaType: "Unsupported content type; send 'application/json'.",
  bodyTooLarge: 'Request body is too large.',
  busy: 'Too many webhook bodies in flight; retry later.',
  bodyCut: 'Request body ended before its Content-Length.',
  /** Names the error class only: a fan-out error's message may quote the payload. */
  fanOutFailed: (deliveryId: string | undefined, errorName: string) => `fan-out failed for delivery '${deliveryId ?? ''}': ${errorName}`,
} as const;

/** An answer the route sends instead of going on. */
export type Rejection = {
  status: number;
  body: ErrorBody;
  retryAfterSeconds?: number;
  /** Answer with `Connection: close`: the body was not (fully) read and must not be. */
  isClosing?: boolean;
};

export function rejection(status: number, code: ErrorCode, message: string): Rejection {
  return { status, body: { code, message } };
}

/** GitHub's form, exactly: lower-case hex, as `@octokit/webhooks` also insists. */
const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/** A header's value; a repeated header (an array) counts as absent rather than guessing which one counts. */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `Content-Length` as a number; undefined when absent (chunked) or not a plain decimal. */
export function contentLengthOf(headers: IncomingHttpHeaders): number | undefined {
  const value = headerOf(headers, 'content-length');
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * The checks that need only the headers, in reference §7.1's order where it has one: size (413),
 * secret configured (503), signature header present and well-formed (401), `X-GitHub-Event` (400),
 * then the content type (415: GitHub's `application/x-www-form-urlencoded` option is not
 * supported; the webhook must be set to `application/json`). Pure.
 */
export function refuseBeforeReading(headers: IncomingHttpHeaders, options: { hasSecret: boolean; allowUnverified: boolean }): Rejection | undefined {
  const length = contentLengthOf(headers);
  if (length !== undefined && length > GITHUB_WEBHOOK_BODY_LIMIT_BYTES) return rejection(413, 'BAD_REQUEST', githubWebhookMessages.bodyTooLarge);
  if (!options.hasSecret && !options.allowUnverified) return rejection(503, 'CHANNEL_UNAVAILABLE', githubWebhookMessages.notConfigured);
  if (options.hasSecret && !SIGNATURE.test(headerOf(headers, 'x-hub-signature-256') ?? '')) {
    return rejection(401, 'UNAUTHORIZED', githubWebhookMessages.badSignature);
  }
  if (headerOf(headers, 'x-github-event') === undefined) return rejection(400, 'BAD_REQUEST', githubWebhookMessages.missingEvent);
  const mediaType = (headerOf(headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/json') return rejection(415, 'BAD_REQUEST', githubWebhookMessages.unsupportedMediaType);
  return undefined;
}

/**
 * A counting semaphore without a queue: a body either gets its share now or its sender is told to
 * come back (GitHub redelivers on request; an attacker gets nothing held). Counts bodies (the
 * large-body slots) or bytes (the small-body budget).
 */
export class InFlightBudget {
  private taken = 0;

  constructor(readonly capacity: number) {}

  /** Units in use now. */
  get inUse(): number {
    return this.taken;
  }

  /** A release function (idempotent), or undefined when `amount` more would exceed the capacity. */
  tryAcquire(amount = 1): (() => void) | undefined {
    if (this.taken + amount > this.capacity) return undefined;
    this.taken += amount;
    let isReleased = false;
    return () => {
      if (isReleased) return;
      isReleased = true;
      this.taken -= amount;
    };
  }
}

/** A body read to the end: its bytes when the signature held (or none was asked for), else why not. */
export type ReadBody = { kind: 'body'; raw: Buffer } | { kind: 'rejected'; rejection: Rejection; bytes: number };

/**
 * Reads a request body to its end, hashing each chunk as it arrives (HMAC-SHA256 under `secret`)
 * and giving up past {@link GITHUB_WEBHOOK_BODY_LIMIT_BYTES} (413). The digest is compared with
 * `signature` (`sha256=<hex>`) in constant time; on a mismatch the bytes are dropped at once and
 * the answer is 401. Without a secret (allow_unverified) the bytes are kept unchecked. An empty
 * body never carries a valid signature (GitHub never sends one).
 * A body cut short (the client went away) resolves as a 400. Never rejects.
 */
export function readSignedBody(payload: Readable, secret: string | undefined, signature: string | undefined): Promise<ReadBody> {
  return new Promise((resolve) => {
    const hmac = secret === undefined ? undefined : createHmac('sha256', secret);
    const chunks: Buffer[] = [];
    let bytes = 0;
    let isSettled = false;
    const settle = (action: () => void): void => {
      if (isSettled) return;
      isSettled = true;
      payload.removeListener('data', onData);
      action();
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > GITHUB_WEBHOOK_BODY_LIMIT_BYTES) {
        chunks.length = 0;
        // Stop reading: the route answers and closes the connection.
        payload.pause();
        settle(() => resolve({ kind: 'rejected', rejection: rejection(413, 'BAD_REQUEST', githubWebhookMessages.bodyTooLarge), bytes }));
        return;
      }
      hmac?.update(chunk);
      chunks.push(chunk);
    };
    payload.on('data', onData);
    payload.once('end', () =>
      settle(() => {
        if (hmac !== undefined && (bytes === 0 || !isSameDigest(hmac.digest(), signature))) {
          chunks.length = 0;
          resolve({ kind: 'rejected', rejection: rejection(401, 'UNAUTHORIZED', githubWebhookMessages.badSignature), bytes });
          return;
        }
        resolve({ kind: 'body', raw: Buffer.concat(chunks, bytes) });
      }),
    );
    // A client that goes away mid-body is no server error: answered (to nobody) as a bad request.
    const cut = (): void => {
      chunks.length = 0;
      settle(() => resolve({ kind: 'rejected', rejection: rejection(400, 'BAD_REQUEST', githubWebhookMessages.bodyCut), bytes }));
    };
    payload.once('error', cut);
    payload.once('close', cut);
  });
}

function isSameDigest(digest: Buffer, signature: string | undefined): boolean {
  if (signature === undefined || !SIGNATURE.test(signature)) return false;
  return timingSafeEqual(digest, Buffer.from(signature.slice('sha256='.length), 'hex'));
}
