import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { httpFailure } from '../../src/channel/http-failure.js';
import { ChannelError } from '../../src/errors.js';
import { WECHAT_LIMITS } from './limits.js';

/** What every iLink request carries besides its own fields (wire facts in README.md). */
export interface IlinkClientOptions {
  baseUrl: string;
  /** Absent until a QR login gave one; `get_bot_qrcode` / `get_qrcode_status` need none. */
  token?: string;
  channelVersion: string;
  appId: string;
  routeTag?: string;
}

/** An iLink answer with a non-zero `ret` / `errcode`: the platform refused. */
export interface IlinkRefusal {
  ret?: number | undefined;
  errcode?: number | undefined;
}

/** iLink's `ret`/`errcode` as one number; 0 = success. */
export function refusalCode(answer: IlinkRefusal): number {
  if (answer.errcode !== undefined && answer.errcode !== 0) return answer.errcode;
  return answer.ret ?? 0;
}

/** uint64 ids that JSON numbers would round (`message_id`, `msg_id`, `svr_id`). */
const LOSSLESS_ID = /(?<!\\)"(message_id|msg_id|svr_id)"(\s*:\s*)(-?\d+)/g;

/**
 * `JSON.parse` with iLink's uint64 ids kept exact: they are quoted first. A `"message_id"`
 * followed by `:` and unescaped is always a key, since a quote inside a JSON string is escaped.
 * Node 20 has no reviver source access; the package quotes the same three keys.
 */
export function parseIlinkJson(text: string): unknown {
  return JSON.parse(text.replace(LOSSLESS_ID, '"$1"$2"$3"'));
}

/** `X-WECHAT-UIN`: a random uint32 in decimal, base64-encoded, new for each request. */
function randomUin(): string {
  return Buffer.from(String(randomBytes(4).readUInt32BE(0)), 'utf8').toString('base64');
}

/** The HTTP failure of an iLink call as a `ChannelError`; never the body, the token or the URL's query. */
export function httpError(status: number, what: string, retryAfterHeader?: string | null): ChannelError {
  return httpFailure('wechat', status, `WeChat ${what} failed: HTTP ${status}`, { retryAfter: retryAfterHeader, defaultRetryAfterMs: WECHAT_LIMITS.defaultRetryAfterMs });
}

/** A refusal in the body (`ret`/`errcode` non-zero) as a `ChannelError`; `-14` is an expired session. */
export function refusalError(code: number, what: string): ChannelError {
  const message = `WeChat ${what} refused: errcode ${code}`;
  if (code === WECHAT_LIMITS.sessionExpiredErrcode) return new ChannelError('wechat', 'CHANNEL_UNAUTHORIZED', message, { status: 502 });
  return new ChannelError('wechat', 'CHANNEL_REJECTED', message, { status: 502 });
}

/**
 * The iLink bot API over `fetch`: JSON POSTs to `<base_url>/ilink/bot/<endpoint>` with the
 * bot-token headers and `base_info`. Rejects with `ChannelError` (HTTP errors, network errors,
 * bodies that fail their schema); a body with a non-zero `ret` is returned for the caller to read.
 */
export class IlinkClient {
  constructor(private options: IlinkClientOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  get hasToken(): boolean {
    return this.options.token !== undefined;
  }

  /** Replaces the token (after a QR login) or drops it (after the session expired). */
  setToken(token: string | undefined): void {
    const { token: _old, ...rest } = this.options;
    this.options = token === undefined ? rest : { ...rest, token };
  }

  /** The same client for another host (a QR login redirected to another data centre). */
  withBaseUrl(baseUrl: string): IlinkClient {
    return new IlinkClient({ ...this.options, baseUrl: baseUrl.replace(/\/+$/, '') });
  }

  /** Points later calls at another host (a QR login's `baseurl`). */
  setBaseUrl(baseUrl: string): void {
    this.options = { ...this.options, baseUrl: baseUrl.replace(/\/+$/, '') };
  }

  /** POST `ilink/bot/<endpoint>` with `body` plus `base_info`; resolves with the answer checked by `schema`. */
  async post<S extends z.ZodType>(endpoint: string, body: Record<string, unknown>, schema: S, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<z.output<S>> {
    const response = await this.request(`${this.options.baseUrl}/ilink/bot/${endpoint}`, endpoint, {
      method: 'POST',
      headers: this.headers(true),
      body: JSON.stringify({ ...body, base_info: { channel_version: this.options.channelVersion } }),
      ...options,
    });
    return this.read(response, endpoint, schema);
  }

  /** GET `ilink/bot/<endpoint>?<query>` (the QR status long poll). */
  async get<S extends z.ZodType>(endpoint: string, query: Record<string, string>, schema: S, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<z.output<S>> {
    const url = `${this.options.baseUrl}/ilink/bot/${endpoint}?${new URLSearchParams(query).toString()}`;
    const response = await this.request(url, endpoint, { method: 'GET', headers: this.headers(false), ...options });
    return this.read(response, endpoint, schema);
  }

  /** Plain fetch with a timeout; network failures and timeouts become `CHANNEL_UNAVAILABLE`, aborts by `signal` stay aborts. */
  async request(url: string, what: string, init: RequestInit & { timeoutMs?: number; signal?: AbortSignal }): Promise<Response> {
    const { timeoutMs = WECHAT_LIMITS.apiTimeoutMs, signal, ...rest } = init;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await fetch(url, { ...rest, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      const reason = timeout.aborted ? 'timed out' : 'unreachable';
      // Node's fetch errors can quote the URL (CDN query parameters): only the name and errno code go on.
      throw new ChannelError('wechat', 'CHANNEL_UNAVAILABLE', `WeChat ${what} ${reason}`, { cause: safeCause(cause), status: 502 });
    }
  }

  private async read<S extends z.ZodType>(response: Response, what: string, schema: S): Promise<z.output<S>> {
    const text = await response.text().catch(() => '');
    if (!response.ok) throw httpError(response.status, what, response.headers.get('retry-after'));
    let json: unknown;
    try {
      json = parseIlinkJson(text);
    } catch {
      throw new ChannelError('wechat', 'CHANNEL_UNAVAILABLE', `WeChat ${what} answered with invalid JSON`, { status: 502 });
    }
    const checked = schema.safeParse(json);
    if (!checked.success) {
      const paths = checked.error.issues.slice(0, 5).map((issue) => issue.path.map(String).join('.') || '(root)');
      throw new ChannelError('wechat', 'CHANNEL_UNAVAILABLE', `WeChat ${what} answered an unexpected shape (${paths.join(', ')})`, { status: 502 });
    }
    return checked.data;
  }

  private headers(hasBody: boolean): Record<string, string> {
    const { token, appId, routeTag, channelVersion } = this.options;
    return {
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      AuthorizationType: 'ilink_bot_token',
      'X-WECHAT-UIN': randomUin(),
      'iLink-App-Id': appId,
      'iLink-App-ClientVersion': String(clientVersion(channelVersion)),
      ...(routeTag ? { SKRouteTag: routeTag } : {}),
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    };
  }
}

/** `iLink-App-ClientVersion`: `major<<16 | minor<<8 | patch` of a dotted version (`buildClientVersion` in the package). */
export function clientVersion(version: string): number {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return ((major & 0xff) << 16) | ((minor & 0xff) << 8) | (patch & 0xff);
}

function safeCause(cause: unknown): Error {
  const name = cause instanceof Error ? cause.name : 'Error';
  const code = (cause as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  const safe = new Error(typeof code === 'string' ? code : name);
  safe.name = name;
  return safe;
}
