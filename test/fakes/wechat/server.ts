import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Waiters } from '../waiters.js';
import { aesDecrypt, aesEncrypt, type Delivered, type FakeBotMessage, type Fault, isValidUin, readBody, type RecordedCall, type UserMessageInput } from './wire.js';

export type { Delivered, FakeBotMessage, Fault, RecordedCall, UserMessageInput } from './wire.js';

export interface FakeWeChatOptions {
  /** How long `getupdates` holds a poll with nothing to deliver, in ms; default 500 (iLink: about 35 s). */
  longPollHoldMs?: number;
  /** Longest text of one message; default 4000 (the package's `textChunkLimit`). */
  maxTextChars?: number;
}

/** First message id: above 2^53, so a client that parses ids as JSON numbers gets them wrong. */
const FIRST_MESSAGE_ID = 7_230_000_000_000_000_001n;

/**
 * A fake iLink bot API and WeChat CDN on 127.0.0.1, speaking the wire of
 * `@tencent-weixin/openclaw-weixin@2.4.9` (channels/wechat/README.md lists the facts):
 * - `POST /ilink/bot/getupdates {get_updates_buf}` long-polls the log of inbound messages from the
 *   cursor (an opaque base64 string naming a position), with uint64 `message_id`s as raw JSON
 *   numbers; `POST /ilink/bot/sendmessage` checks the token, the `context_token` (issued to that
 *   person), one item and the text length, and the chat then shows the bot message;
 *   `POST /ilink/bot/getuploadurl` and the CDN `POST /c2c/upload`, `GET /c2c/download`
 *   (AES-128-ECB); QR login `get_bot_qrcode` / `get_qrcode_status`.
 * - Every request is recorded (`calls`) and must carry `AuthorizationType: ilink_bot_token`, a valid
 *   `X-WECHAT-UIN` and, for the bot API, `Authorization: Bearer <token>` (`headerViolations`).
 * - Faults: `failNext(endpoint, fault)` (HTTP status with Retry-After, a `ret` such as -14, a
 *   dropped socket), `expireToken()` (every call answers -14 until `renewToken()`), `redeliver(id)`
 *   (the message is in the log again). A 429 blocks its chat; sends meanwhile are violations.
 */
export class FakeWeChat {
  token = 'fake-ilink-bot-token';
  readonly botId = 'fakebot@im.bot';
  readonly calls: RecordedCall[] = [];
  readonly headerViolations: string[] = [];
  readonly rateLimitViolations: { chatId: string; at: number }[] = [];
  /** Uploads the bot made, decrypted, by download param. */
  readonly uploads = new Map<string, { encrypted: Buffer; bytes: Buffer; mediaType: number }>();
  private readonly log: string[] = [];
  private readonly messages = new Map<string, FakeBotMessage[]>();
  private readonly contextTokens = new Map<string, { chatId: string; messageId: string }>();
  private readonly downloads = new Map<string, Buffer>();
  private readonly pendingUploads = new Map<string, { key: Buffer; md5: string; mediaType: number }>();
  private readonly faults = new Map<string, Fault[]>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly waiters = new Waiters('FakeWeChat', { pollMs: 20 });
  private readonly options: Required<FakeWeChatOptions>;
  private isTokenExpired = false;
  private qr: { code: string; isConfirmed: boolean } | undefined;
  private nextMessageId = FIRST_MESSAGE_ID;
  private server: Server | undefined;
  private port = 0;

  constructor(options: FakeWeChatOptions = {}) {
    this.options = { longPollHoldMs: options.longPollHoldMs ?? 500, maxTextChars: options.maxTextChars ?? 4000 };
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get cdnBaseUrl(): string {
    return `http://127.0.0.1:${this.port}/c2c`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** A person (or bot) writes; the message is in the log for the next poll. */
  sendUserMessage(input: UserMessageInput): Delivered {
    const messageId = String(this.nextMessageId++);
    const contextToken = `ctx-${randomBytes(8).toString('hex')}`;
    if (input.fromBot === undefined) this.contextTokens.set(contextToken, { chatId: input.userId, messageId });
    const items: unknown[] = [];
    if (input.text !== undefined) items.push({ type: 1, text_item: { text: input.text } });
    if (input.voiceText !== undefined) items.push({ type: 3, voice_item: { text: input.voiceText, encode_type: 6 } });
    if (input.image) items.push({ type: 2, image_item: this.imageItem(input.image) });
    if (input.file) items.push({ type: 4, file_item: this.fileItem(input.file) });
    const message = input.raw ?? {
      seq: this.log.length + 1,
      message_id: `@@ID${messageId}@@`,
      from_user_id: input.fromBot ?? input.userId,
      to_user_id: input.fromBot === undefined ? this.botId : input.userId,
      client_id: `client-${messageId}`,
      create_time_ms: Date.now(),
      session_id: `session-${input.userId}`,
      message_type: input.fromBot === undefined ? 1 : 2,
      message_state: 2,
      item_list: items,
      context_token: contextToken,
    };
    // uint64 ids go out as raw JSON numbers, as iLink sends them.
    this.log.push(JSON.stringify(message).replace(/"@@ID(\d+)@@"/g, '$1'));
    this.waiters.notify();
    return { chatId: input.userId, messageId, contextToken };
  }

  /** The message is delivered again (iLink redelivering after a lost cursor). */
  redeliver(messageId: string): void {
    const entry = this.log.find((json) => json.includes(`"message_id":${messageId},`));
    if (entry === undefined) throw new Error(`FakeWeChat.redeliver: no message ${messageId}`);
    this.log.push(entry);
    this.waiters.notify();
  }

  /** The next `times` requests to `endpoint` (`getupdates`, `sendmessage`, `getuploadurl`, `cdn-upload`, `cdn-download`) meet `fault`. */
  failNext(endpoint: string, fault: Fault, times = 1): void {
    const list = this.faults.get(endpoint) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(endpoint, list);
  }

  /** Every bot API call answers `errcode -14` until `renewToken`. */
  expireToken(): void {
    this.isTokenExpired = true;
  }

  renewToken(token: string): void {
    this.token = token;
    this.isTokenExpired = false;
  }

  /** The person scanned the QR code and confirmed: the status poll answers with a new token. */
  confirmQrLogin(): void {
    if (this.qr) this.qr.isConfirmed = true;
    this.waiters.notify();
  }

  get qrCode(): string | undefined {
    return this.qr?.code;
  }

  /** The bot's messages in a person's chat, in order. */
  botMessages(chatId: string): FakeBotMessage[] {
    return [...(this.messages.get(chatId) ?? [])];
  }

  /** How many messages the log holds (delivered or not). */
  get logLength(): number {
    return this.log.length;
  }

  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs?: number): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  private imageItem(image: NonNullable<UserMessageInput['image']>): Record<string, unknown> {
    const key = randomBytes(16);
    const param = this.storeDownload(aesEncrypt(image.bytes, key));
    const encoding = image.keyEncoding ?? 'hex-field';
    const media: Record<string, unknown> = { encrypt_query_param: param, encrypt_type: 1 };
    if (encoding === 'base64-raw') media.aes_key = key.toString('base64');
    if (encoding === 'base64-hex') media.aes_key = Buffer.from(key.toString('hex'), 'ascii').toString('base64');
    return {
      media,
      ...(encoding === 'hex-field' ? { aeskey: key.toString('hex') } : {}),
      mid_size: image.declaredSize ?? image.bytes.length,
    };
  }

  private fileItem(file: NonNullable<UserMessageInput['file']>): Record<string, unknown> {
    const key = randomBytes(16);
    const param = this.storeDownload(aesEncrypt(file.bytes, key));
    // Files carry base64 of the hex key (the package's parseAesKey, second form).
    const media = { encrypt_query_param: param, aes_key: Buffer.from(key.toString('hex'), 'ascii').toString('base64'), encrypt_type: 1 };
    return { media, file_name: file.name, len: String(file.declaredSize ?? file.bytes.length) };
  }

  private storeDownload(encrypted: Buffer): string {
    const param = randomBytes(12).toString('base64url');
    this.downloads.set(param, encrypted);
    return param;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.baseUrl);
    const raw = request.method === 'POST' ? await readBody(request) : Buffer.alloc(0);
    const isApi = url.pathname.startsWith('/ilink/bot/');
    let body: unknown;
    if (isApi && raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return this.answer(request, response, url, undefined, 400, { ret: -1, errmsg: 'bad json' });
      }
    }
    const endpoint = isApi ? url.pathname.slice('/ilink/bot/'.length) : `cdn-${url.pathname.split('/').pop()}`;
    if (isApi) this.checkHeaders(request, endpoint);
    const fault = this.faults.get(endpoint)?.shift();
    if (fault?.kind === 'drop') {
      this.record(request, url, body, 0);
      request.socket.destroy();
      return;
    }
    if (fault?.kind === 'http') {
      const chatId = chatOf(body);
      if (fault.status === 429 && chatId !== undefined && fault.retryAfterSeconds !== undefined) {
        this.blockedUntil.set(chatId, Date.now() + fault.retryAfterSeconds * 1000);
      }
      const headers: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
      return this.answer(request, response, url, body, fault.status, { ret: -1, errmsg: 'injected' }, headers);
    }
    if (fault?.kind === 'ret') return this.answer(request, response, url, body, 200, { ret: fault.code, errcode: fault.code, errmsg: 'injected' });
    switch (endpoint) {
      case 'getupdates':
        return this.getUpdates(request, response, url, body as { get_updates_buf?: string });
      case 'sendmessage':
        return this.sendMessage(request, response, url, body as { msg?: Record<string, unknown> });
      case 'getuploadurl':
        return this.getUploadUrl(request, response, url, body as Record<string, unknown>);
      case 'get_bot_qrcode':
        this.qr = { code: `qr-${randomBytes(6).toString('hex')}`, isConfirmed: false };
        return this.answer(request, response, url, body, 200, { qrcode: this.qr.code, qrcode_img_content: `https://liteapp.weixin.qq.com/q/${this.qr.code}` });
      case 'get_qrcode_status':
        return this.qrStatus(request, response, url);
      case 'cdn-upload':
        return this.cdnUpload(request, response, url, raw);
      case 'cdn-download': {
        const bytes = this.downloads.get(url.searchParams.get('encrypted_query_param') ?? '');
        this.record(request, url, undefined, bytes ? 200 : 404);
        if (!bytes) return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
        return;
      }
      default:
        return this.answer(request, response, url, body, 404, { ret: -1, errmsg: 'no such endpoint' });
    }
  }

  private checkHeaders(request: IncomingMessage, endpoint: string): void {
    const { headers } = request;
    if (headers.authorizationtype !== 'ilink_bot_token') this.headerViolations.push(`${endpoint}: AuthorizationType`);
    if (!isValidUin(headers['x-wechat-uin'])) this.headerViolations.push(`${endpoint}: X-WECHAT-UIN`);
    if (headers['ilink-app-id'] === undefined) this.headerViolations.push(`${endpoint}: iLink-App-Id`);
  }

  /** The bot API's token check; QR endpoints need none. False when it answered. */
  private authorized(request: IncomingMessage, response: ServerResponse, url: URL, body: unknown): boolean {
    if (this.isTokenExpired) {
      this.answer(request, response, url, body, 200, { ret: -14, errcode: -14, errmsg: 'session timeout' });
      return false;
    }
    if (request.headers.authorization !== `Bearer ${this.token}`) {
      this.answer(request, response, url, body, 200, { ret: -14, errcode: -14, errmsg: 'invalid token' });
      return false;
    }
    return true;
  }

  private async getUpdates(request: IncomingMessage, response: ServerResponse, url: URL, body: { get_updates_buf?: string }): Promise<void> {
    if (!this.authorized(request, response, url, body)) return;
    const from = positionOf(body?.get_updates_buf);
    if (from >= this.log.length) {
      let onClose: () => void = () => undefined;
      const aborted = new Promise<void>((resolve) => {
        onClose = resolve;
        request.socket.once('close', onClose);
      });
      await Promise.race([this.waiters.waitFor(() => this.log.length > from || this.isTokenExpired, this.options.longPollHoldMs).catch(() => undefined), aborted]);
      // Keep-alive sockets carry many polls: one listener per poll would pile up.
      request.socket.off('close', onClose);
      if (request.socket.destroyed) return;
      if (this.isTokenExpired) return this.answer(request, response, url, body, 200, { ret: -14, errcode: -14, errmsg: 'session timeout' });
    }
    const batch = this.log.slice(from);
    const next = cursorOf(this.log.length);
    this.record(request, url, body, 200, 0);
    const json = `{"ret":0,"msgs":[${batch.join(',')}],"get_updates_buf":${JSON.stringify(next)},"longpolling_timeout_ms":${this.options.longPollHoldMs}}`;
    response.writeHead(200, { 'content-type': 'application/json' }).end(json);
  }

  private async sendMessage(request: IncomingMessage, response: ServerResponse, url: URL, body: { msg?: Record<string, unknown> }): Promise<void> {
    if (!this.authorized(request, response, url, body)) return;
    const msg = body?.msg ?? {};
    const chatId = typeof msg.to_user_id === 'string' ? msg.to_user_id : '';
    const items = Array.isArray(msg.item_list) ? (msg.item_list as Record<string, unknown>[]) : [];
    const issued = typeof msg.context_token === 'string' ? this.contextTokens.get(msg.context_token) : undefined;
    const now = Date.now();
    if ((this.blockedUntil.get(chatId) ?? 0) > now) this.rateLimitViolations.push({ chatId, at: now });
    if (issued === undefined || issued.chatId !== chatId) return this.answer(request, response, url, body, 200, { ret: -2, errmsg: 'invalid context_token' });
    if (msg.message_type !== 2 || items.length !== 1) return this.answer(request, response, url, body, 200, { ret: -2, errmsg: 'bad message' });
    const [item] = items as [Record<string, unknown>];
    const text = (item.text_item as { text?: unknown } | undefined)?.text;
    if (item.type === 1 && (typeof text !== 'string' || text === '' || text.length > this.options.maxTextChars)) {
      return this.answer(request, response, url, body, 200, { ret: -2, errmsg: 'bad text' });
    }
    const attachment = this.attachmentOf(item);
    if (item.type !== 1 && attachment === undefined) return this.answer(request, response, url, body, 200, { ret: -2, errmsg: 'bad media' });
    const messageId = String(this.nextMessageId++);
    const list = this.messages.get(chatId) ?? [];
    list.push({ messageId, chatId, text: typeof text === 'string' ? text : '', replyTo: issued.messageId, ...(attachment ? { attachment } : {}), sentAt: now });
    this.messages.set(chatId, list);
    this.record(request, url, body, 200, 0);
    response.writeHead(200, { 'content-type': 'application/json' }).end(`{"ret":0,"message_id":${messageId}}`);
    this.waiters.notify();
  }

  private attachmentOf(item: Record<string, unknown>): FakeBotMessage['attachment'] {
    const holder = (item.type === 2 ? item.image_item : item.type === 4 ? item.file_item : undefined) as
      | { media?: { encrypt_query_param?: string; aes_key?: string }; file_name?: string }
      | undefined;
    const param = holder?.media?.encrypt_query_param;
    const upload = param === undefined ? undefined : this.uploads.get(param);
    if (!upload || !holder?.media?.aes_key) return undefined;
    // The receiving phone decrypts with the key the message names (base64 of its hex form): it must open the upload.
    const hex = Buffer.from(holder.media.aes_key, 'base64').toString('ascii');
    if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
    let bytes: Buffer;
    try {
      bytes = aesDecrypt(upload.encrypted, Buffer.from(hex, 'hex'));
    } catch {
      return undefined;
    }
    return { kind: item.type === 2 ? 'image' : 'file', ...(holder.file_name ? { name: holder.file_name } : {}), bytes };
  }

  private async getUploadUrl(request: IncomingMessage, response: ServerResponse, url: URL, body: Record<string, unknown>): Promise<void> {
    if (!this.authorized(request, response, url, body)) return;
    const key = typeof body.aeskey === 'string' && /^[0-9a-f]{32}$/.test(body.aeskey) ? Buffer.from(body.aeskey, 'hex') : undefined;
    if (!key || typeof body.filekey !== 'string' || typeof body.rawfilemd5 !== 'string') {
      return this.answer(request, response, url, body, 200, { ret: -2, errmsg: 'bad upload request' });
    }
    const uploadParam = randomBytes(12).toString('base64url');
    this.pendingUploads.set(uploadParam, { key, md5: body.rawfilemd5, mediaType: Number(body.media_type) });
    this.answer(request, response, url, body, 200, { ret: 0, upload_param: uploadParam });
  }

  private cdnUpload(request: IncomingMessage, response: ServerResponse, url: URL, raw: Buffer): void {
    const pending = this.pendingUploads.get(url.searchParams.get('encrypted_query_param') ?? '');
    this.record(request, url, undefined, pending ? 200 : 400);
    if (!pending || !url.searchParams.get('filekey')) return void response.writeHead(400, { 'x-error-message': 'bad upload' }).end();
    let bytes: Buffer;
    try {
      bytes = aesDecrypt(raw, pending.key);
    } catch {
      return void response.writeHead(400, { 'x-error-message': 'not decryptable' }).end();
    }
    if (createHash('md5').update(bytes).digest('hex') !== pending.md5) return void response.writeHead(400, { 'x-error-message': 'md5 mismatch' }).end();
    const downloadParam = `dl-${randomBytes(8).toString('hex')}`;
    this.uploads.set(downloadParam, { encrypted: raw, bytes, mediaType: pending.mediaType });
    response.writeHead(200, { 'x-encrypted-param': downloadParam }).end();
  }

  private async qrStatus(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    const code = url.searchParams.get('qrcode');
    if (!this.qr || code !== this.qr.code) return this.answer(request, response, url, undefined, 200, { status: 'expired' });
    if (!this.qr.isConfirmed) await this.waiters.waitFor(() => this.qr?.isConfirmed, this.options.longPollHoldMs).catch(() => undefined);
    if (!this.qr.isConfirmed) return this.answer(request, response, url, undefined, 200, { status: 'wait' });
    this.answer(request, response, url, undefined, 200, { status: 'confirmed', bot_token: this.token, ilink_bot_id: this.botId, baseurl: this.baseUrl });
  }

  private answer(request: IncomingMessage, response: ServerResponse, url: URL, body: unknown, status: number, json: Record<string, unknown>, headers: Record<string, string> = {}): void {
    this.record(request, url, body, status, typeof json.ret === 'number' ? json.ret : undefined);
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(json));
    this.waiters.notify();
  }

  private record(request: IncomingMessage, url: URL, body: unknown, status: number, ret?: number): void {
    const chatId = chatOf(body);
    this.calls.push({ method: request.method ?? '', path: url.pathname, body, headers: request.headers, status, ...(ret === undefined ? {} : { ret }), ...(chatId === undefined ? {} : { chatId }), at: Date.now() });
  }
}

function chatOf(body: unknown): string | undefined {
  const to = (body as { msg?: { to_user_id?: unknown } } | undefined)?.msg?.to_user_id;
  return typeof to === 'string' ? to : undefined;
}

/** The cursor: opaque to clients, here the log position in base64. */
function cursorOf(position: number): string {
  return Buffer.from(`fake-sync:${position}`).toString('base64');
}

function positionOf(cursor: string | undefined): number {
  if (!cursor) return 0;
  const match = /^fake-sync:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match ? Number(match[1]) : 0;
}
