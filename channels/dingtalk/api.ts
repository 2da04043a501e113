import { httpFailure } from '../../src/channel/http-failure.js';
import { ChannelError } from '../../src/errors.js';
import { DINGTALK_LIMITS } from './limits.js';

/** What DingTalk's OpenAPI answered with an error: HTTP status and its `code`, never the body. */
export function toChannelError(status: number, code: string | undefined, what: string, retryAfterHeader?: string | null): ChannelError {
  return httpFailure('dingtalk', status, `DingTalk ${what} failed: HTTP ${status}${code ? ` ${code}` : ''}`, {
    retryAfter: retryAfterHeader,
    defaultRetryAfterMs: DINGTALK_LIMITS.defaultRetryAfterMs,
    isRateLimited: (code ?? '').includes('QpsLimit') || code === 'Throttling',
  });
}

export interface DingTalkApiOptions {
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  now: () => number;
}

/**
 * DingTalk's OpenAPI over `fetch`: the access token (cached until 5 min before it expires,
 * refreshed once when a call answers that it is invalid) and JSON calls with
 * `x-acs-dingtalk-access-token`. Rejects with `ChannelError`; never puts tokens or bodies in errors.
 */
export class DingTalkApi {
  private token: { value: string; refreshAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;

  constructor(private readonly options: DingTalkApiOptions) {}

  get robotCode(): string {
    return this.options.clientId;
  }

  /** Resolves with a valid access token. */
  async accessToken(): Promise<string> {
    if (this.token && this.options.now() < this.token.refreshAt) return this.token.value;
    this.tokenRequest ??= this.fetchToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async fetchToken(): Promise<string> {
    const { apiUrl, clientId, clientSecret } = this.options;
    const response = await this.fetch(`${apiUrl}/v1.0/oauth2/accessToken`, 'accessToken', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ appKey: clientId, appSecret: clientSecret }),
    });
    const body = (await response.json().catch(() => ({}))) as { accessToken?: string; expireIn?: number; code?: string };
    if (!response.ok || typeof body.accessToken !== 'string') throw toChannelError(response.status, body.code, 'accessToken');
    const expiresInMs = (body.expireIn ?? 7200) * 1000;
    this.token = { value: body.accessToken, refreshAt: this.options.now() + expiresInMs - DINGTALK_LIMITS.tokenEarlyRefreshMs };
    return body.accessToken;
  }

  /** A JSON call to the OpenAPI; `path` starts with `/v1.0/`. Retries once with a fresh token when the token was refused. */
  async call<T>(method: 'POST' | 'PUT', path: string, body: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const response = await this.fetch(`${this.options.apiUrl}${path}`, path, {
        method,
        headers: { 'content-type': 'application/json', 'x-acs-dingtalk-access-token': token },
        body: JSON.stringify(body),
      });
      const answer = (await response.json().catch(() => ({}))) as T & { code?: string };
      if (response.ok) return answer;
      if (isTokenRefusal(response.status, answer.code) && attempt === 1) {
        this.token = undefined;
        continue;
      }
      throw toChannelError(response.status, answer.code, path, response.headers.get('retry-after'));
    }
  }

  /** Uploads bytes as media (`type` image or file); resolves with the `mediaId`. */
  async upload(type: 'image' | 'file', name: string, bytes: Uint8Array): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const token = await this.accessToken();
      const form = new FormData();
      form.set('type', type);
      form.set('file', new Blob([bytes]), name);
      const response = await this.fetch(`${this.options.apiUrl}/v1.0/files/upload`, 'files/upload', {
        method: 'POST',
        headers: { 'x-acs-dingtalk-access-token': token },
        body: form,
      });
      const answer = (await response.json().catch(() => ({}))) as { mediaId?: string; code?: string };
      if (response.ok && typeof answer.mediaId === 'string') return answer.mediaId;
      if (isTokenRefusal(response.status, answer.code) && attempt === 1) {
        this.token = undefined;
        continue;
      }
      throw toChannelError(response.status, answer.code, 'files/upload', response.headers.get('retry-after'));
    }
  }

  /** Plain fetch, with network failures as `CHANNEL_UNAVAILABLE`. */
  async fetch(url: string, what: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (cause) {
      throw new ChannelError('dingtalk', 'CHANNEL_UNAVAILABLE', `DingTalk ${what} unreachable`, { cause, status: 502 });
    }
  }
}

/** DingTalk answers an expired or invalid token with 401 or an `InvalidAuthentication` code. */
function isTokenRefusal(status: number, code: string | undefined): boolean {
  return status === 401 || code === 'InvalidAuthentication' || code === 'InvalidAccessToken';
}
