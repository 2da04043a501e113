import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, fetch, type Response } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { MAX_SHOWN_URL_CHARS, showUrl, WebFetchError } from './errors.js';


export interface GuardedFetchOptions {
  /** Decides which URLs and which resolved addresses may be connected to. */
  policy: AddressPolicy;
  /** Bytes of (decoded) body kept; the rest is not downloaded and `truncated` is set. */
  maxBytes: number;
  /** For the whole fetch: every redirect, and the body. */
  timeoutMs: number;
  /** Redirects followed before giving up; 5 when absent. */
  maxRedirects?: number;
  /** Ends the fetch early (the run was cancelled). */
  signal?: AbortSignal;
  userAgent?: string;
}

export interface FetchedPage {
  /** The final URL, after redirects. */
  url: string;
  /** Any status, not only 2xx: the caller reports a 404 rather than fail. */
  status: number;
  /** Lowercased media type without parameters (`text/html`); `''` when the server sent none. */
  contentType: string;
  /** The `charset` parameter of `Content-Type`, lowercased, when there was one. */
  charset?: string;
  body: Buffer;
  /** True when the body was cut at `maxBytes`. */
  truncated: boolean;
}

const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_USER_AGENT = 'deerflow-channels (+https://github.com/)';
const ACCEPT = 'text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.5';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches a URL the model chose, without letting it reach the server's own networks (SSRF): the
 * URL and every redirect hop pass `policy.checkUrl`, and every address a host name resolves to
 * passes the policy at connect time, in the lookup the socket itself uses, so a name that
 * resolves differently on a second lookup (DNS rebinding) gains nothing. Redirects are followed
 * here, up to `maxRedirects`; the body is read up to `maxBytes`; `timeoutMs` bounds the whole.
 *
 * No environment proxy is used: the connection goes to the vetted address.
 *
 * @throws WebFetchError when refused, for an invalid URL, on a network error, on timeout, or when
 *   `signal` aborts. A non-2xx status is no error: it is returned.
 */
export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<FetchedPage> {
  const { policy } = options;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let current = parseUrl(url);
  policy.checkUrl(current);
  if (options.signal?.aborted) throw cancelled(current);

  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? deadline : AbortSignal.any([deadline, options.signal]);
  // One agent per call, destroyed at the end: no socket outlives the fetch, and none is reused
  // for a host whose addresses were vetted for another call.
  const agent = new Agent({ connect: { lookup: vettedLookup(policy) } });
  const headers = { 'user-agent': options.userAgent ?? DEFAULT_USER_AGENT, accept: ACCEPT };
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await fetch(current.href, { dispatcher: agent, redirect: 'manual', signal, headers });
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return await readPage(current, response, options.maxBytes);
      await response.body?.cancel().catch(() => undefined);
      if (redirects >= maxRedirects) {
        throw new WebFetchError('refused', `${showUrl(current)} redirects more than ${maxRedirects} times; the server stopped following`);
      }
      const next = parseUrl(location, current);
      policy.checkUrl(next);
      current = next;
    }
  } catch (error) {
    throw explain(error, current, { deadline, signal: options.signal, timeoutMs: options.timeoutMs });
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}


function parseUrl(text: string, base?: URL): URL {
  try {
    return new URL(text, base);
  } catch {
    const shown = text.length > MAX_SHOWN_URL_CHARS ? `${text.slice(0, MAX_SHOWN_URL_CHARS)}…` : text;
    throw new WebFetchError('invalid', base === undefined ? `'${shown}' is not a valid URL` : `${showUrl(base)} redirects to '${shown}', which is not a valid URL`);
  }
}

/**
 * The socket's DNS lookup: resolves every address of the host and refuses the host if any one is
 * refused, since which of them a connection ends up on is not ours to choose. The socket connects
 * to what this returns and nothing else.
 */
function vettedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { all: true, family: lookupOptions.family ?? 0, hints: lookupOptions.hints ?? 0 }, (error, addresses) => {
      if (error !== null) {
        callback(error, '');
        return;
      }
      for (const { address } of addresses) {
        const refusal = policy.refusal(address);
        if (refusal !== undefined) {
          callback(new RefusedHost(`${hostname} resolves to ${address}, ${refusal}; the server does not fetch private networks`), '');
          return;
        }
      }
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      } else if (lookupOptions.all === true) {
        // Every one of them was vetted; the socket may try them in turn (happy eyeballs).
        callback(null, addresses);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

/** A refusal from inside the socket's lookup, where the URL is not known; `explain` names it. */
class RefusedHost extends Error {
  override readonly name = 'RefusedHost';
}

async function readPage(url: URL, response: Response, maxBytes: number): Promise<FetchedPage> {
  const { body, truncated } = await readBody(response.body, maxBytes);
  const [mediaType = '', ...parameters] = (response.headers.get('content-type') ?? '').split(';');
  const charset = parameters
    .map((parameter) => /^\s*charset\s*=\s*"?([^";\s]*)"?\s*$/i.exec(parameter)?.[1])
    .find((value) => value !== undefined && value !== '');
  return {
    url: url.href,
    status: response.status,
    contentType: mediaType.trim().toLowerCase(),
    ...(charset === undefined ? {} : { charset: charset.toLowerCase() }),
    body,
    truncated,
  };
}

/** Reads at most `maxBytes` and cancels the rest, so a huge (or endless) body is never downloaded. */
async function readBody(stream: Response['body'], maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (stream === null) return { body: Buffer.alloc(0), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks, size), truncated: false };
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      await reader.cancel().catch(() => undefined);
      return { body: Buffer.concat(chunks, maxBytes), truncated: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}

/** Turns whatever the fetch threw into a `WebFetchError` for the model; the original stays as `cause`, for logs. */
function explain(
  error: unknown,
  url: URL,
  context: { deadline: AbortSignal; signal: AbortSignal | undefined; timeoutMs: number },
): WebFetchError {
  if (error instanceof WebFetchError) return error;
  if (context.deadline.aborted) {
    return new WebFetchError('timeout', `${showUrl(url)} took longer than ${formatSeconds(context.timeoutMs)} to fetch and was abandoned`, { cause: error });
  }
  if (context.signal?.aborted) return cancelled(url, error);
  const causes = causeChain(error);
  const refused = causes.find((cause) => cause instanceof RefusedHost);
  if (refused !== undefined) return new WebFetchError('refused', `${showUrl(url)} is refused: ${refused.message}`, { cause: error });
  // undici's own refusal of ports that browsers never fetch (25, 110, 6667...) carries no code.
  if (causes.some((cause) => cause.message === 'bad port')) {
    return new WebFetchError('refused', `${showUrl(url)} is refused: port ${url.port} is blocked for web fetches`, { cause: error });
  }
  const code = causes.map((cause) => (cause as { code?: unknown }).code).find((value): value is string => typeof value === 'string');
  return new WebFetchError('failed', `${showUrl(url)} could not be fetched: ${networkReason(code)}`, { cause: error });
}

function cancelled(url: URL, cause?: unknown): WebFetchError {
  return new WebFetchError('cancelled', `fetching ${showUrl(url)} was cancelled`, cause === undefined ? {} : { cause });
}

/** The error and what it wraps: undici's `fetch failed` holds the socket's error as `cause`, happy eyeballs an `AggregateError`. */
function causeChain(error: unknown): Error[] {
  const found: Error[] = [];
  const pending: unknown[] = [error];
  while (pending.length > 0 && found.length < 16) {
    const current = pending.shift();
    if (!(current instanceof Error)) continue;
    found.push(current);
    pending.push(current.cause);
    if (current instanceof AggregateError) pending.push(...current.errors);
  }
  return found;
}

/** A short reason by error code; library messages are not passed on (they name addresses, files, internals). */
function networkReason(code: string | undefined): string {
  switch (code) {
    case 'ENOTFOUND':
      return 'the host name does not resolve';
    case 'EAI_AGAIN':
      return 'the host name could not be resolved just now (DNS failure)';
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'the server closed the connection';
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'the connection timed out';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'the server stopped answering';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host is unreachable';
    case 'UND_ERR_HEADERS_OVERFLOW':
      return 'the response headers are too large';
    case undefined:
      return 'the request failed';
  }
  if (code.startsWith('HPE_')) return 'the server sent an invalid HTTP response';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT') || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE') {
    return 'the TLS connection failed (bad or untrusted certificate, or no common protocol)';
  }
  return 'the request failed';
}

function formatSeconds(ms: number): string {
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
}

export { showUrl, WebFetchError, type WebFetchFailure } from './errors.js';
