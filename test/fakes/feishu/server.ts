import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { Waiters } from '../waiters.js';
import { decodeFrame, encodeFrame, FRAME_METHOD, type Frame, headerOf } from './frames.js';

/**
 * A fake Feishu/Lark: the open API (tenant token, im messages create/reply/patch, reactions,
 * message resources, CardKit cards) and the long connection (`/callback/ws/endpoint` + a
 * websocket speaking binary `pbbp2.Frame`s). Point the SDK's `domain` at `url`. The real
 * `@larksuiteoapi/node-sdk` runs against it unchanged.
 */

export type FakeFault =
  /** HTTP 429, code 99991400, `x-ogw-ratelimit-reset` in whole seconds. */
  | { kind: 'rate-limit'; resetSeconds: number }
  /** The current tenant token stops working (code 99991663) before this call is served. */
  | { kind: 'expire-token' }
  /** HTTP 400 with a business code (card errors such as 230020). */
  | { kind: 'business'; code: number }
  /** Only for `token`: HTTP `status` with `json` as its body, else a proxy's HTML error page (an overloaded gateway). */
  | { kind: 'http'; status: number; json?: Record<string, unknown> };

/** Which API a fault applies to. */
/** `patch` covers every update of a shown card: im PATCH and CardKit element content; `card` is CardKit create/settings. */
export type FakeOperation = 'send' | 'patch' | 'card' | 'reaction' | 'resource' | 'token';

export interface RecordedCall {
  operation: FakeOperation | 'other';
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** The chat the call addressed, when known. */
  chatId?: string;
  at: number;
  status: number;
  code: number;
}

export interface FakeCard {
  cardId: string;
  /** markdown elements by element_id, in order. */
  elements: Map<string, string>;
  isStreaming: boolean;
  lastSequence: number;
  messageIds: string[];
  updatedAt: number[];
}

export interface FeishuMessageView {
  messageId: string;
  chatId: string;
  /** The bot's message: current text (markdown elements of its card, or its text). */
  text: string;
  msgType: string;
  replyTo?: string;
  rootId?: string;
  fromBot: boolean;
  history: string[];
  sentAt: number;
  editedAt: number[];
}

export interface UserMessageInput {
  chatId: string;
  chatType: 'p2p' | 'group';
  openId: string;
  senderType?: 'user' | 'app';
  text?: string;
  /** Raw `message_type` + `content` instead of `text`. */
  messageType?: string;
  content?: string;
  /** Message replied to: root_id becomes its root. */
  parentId?: string;
  mentionsBot?: boolean;
  /** Reuse an event id (a redelivery). */
  eventId?: string;
}

export interface PushedEvent {
  eventId: string;
  messageId: string;
  chatId: string;
  acked: boolean;
  /** How many times it was pushed. */
  pushes: number;
}

const TOKEN_PATH = '/open-apis/auth/v3/tenant_access_token/internal';

export class FakeFeishu {
  readonly appId = `cli_${randomBytes(8).toString('hex')}`;
  readonly appSecret = 'fake-secret';
  readonly botOpenId = 'ou_bot000000000000000000000000000';
  readonly verificationToken = 'fake-verification-token';
  readonly calls: RecordedCall[] = [];
  readonly messages: FeishuMessageView[] = [];
  readonly reactions: { messageId: string; emoji: string; at: number }[] = [];
  readonly events: PushedEvent[] = [];
  readonly rateLimitViolations: { chatId: string; at: number }[] = [];
  readonly resources = new Map<string, Uint8Array>();
  /** Uploaded images and files, with the request body's size (multipart). */
  readonly uploads: { key: string; isImage: boolean; bytes: number; at: number }[] = [];
  /** CardKit card entities by card_id. */
  readonly cards = new Map<string, FakeCard>();
  /** CardKit operations on one card beyond 10 in any second; must stay empty. */
  readonly cardRateViolations: { cardId: string; at: number }[] = [];
  /** Calls of one open API method beyond Feishu's per-app 50 a second or 1000 a minute; must stay empty. */
  readonly appRateViolations: { api: string; at: number }[] = [];
  private readonly callsByApi = new Map<string, number[]>();
  /** Unacked events are pushed again after this long; 0 = never. */
  redeliverAfterMs = 0;
  private readonly validTokens = new Set<string>();
  private tokenCount = 0;
  private messageCount = 0;
  private eventCount = 0;
  private readonly faults: { operation: FakeOperation; fault: FakeFault }[] = [];
  private readonly blockedUntil = new Map<string, number>();
  private readonly sockets = new Set<WebSocket>();
  private readonly waiters = new Waiters('FakeFeishu');
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly pending = new Map<string, { frame: Uint8Array; timer?: ReturnType<typeof setTimeout> }>();

  constructor() {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
    this.server.on('upgrade', (req, socket, head) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const entry of this.pending.values()) clearTimeout(entry.timer);
    for (const socket of this.sockets) socket.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The next call of `operation` gets `fault`. */
  failNext(operation: FakeOperation, fault: FakeFault): void {
    this.faults.push({ operation, fault });
  }

  /** Every token issued so far stops working (the next API call answers 99991663). */
  expireTokens(): void {
    this.validTokens.clear();
  }

  /** Drops every long connection, as a network failure would. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.terminate();
    this.sockets.clear();
  }

  connectionCount(): number {
    return this.sockets.size;
  }

  botMessages(chatId: string): FeishuMessageView[] {
    return this.messages.filter((m) => m.fromBot && m.chatId === chatId);
  }

  /** Builds an `im.message.receive_v1` event (schema 2.0) and records the user's message. */
  buildUserEvent(input: UserMessageInput): { event: Record<string, unknown>; messageId: string; eventId: string } {
    const messageId = `om_${(++this.messageCount).toString(16).padStart(8, '0')}`;
    const eventId = input.eventId ?? `ev_${++this.eventCount}`;
    const parent = input.parentId === undefined ? undefined : this.messages.find((m) => m.messageId === input.parentId);
    const rootId = input.parentId === undefined ? undefined : (parent?.rootId ?? input.parentId);
    // As Feishu's clients send it: the typed text as is in `content.text`, each mention as a key
    // (`@_user_1`) that the event's `mentions` resolves (https://open.feishu.cn/document/server-docs/im-v1/message/events/receive).
    const mention = input.mentionsBot ? '@_user_1 ' : '';
    const messageType = input.messageType ?? 'text';
    const content = input.content ?? JSON.stringify({ text: `${mention}${input.text ?? ''}` });
    this.messages.push({
      messageId,
      chatId: input.chatId,
      text: input.text ?? '',
      msgType: messageType,
      ...(input.parentId === undefined ? {} : { replyTo: input.parentId }),
      ...(rootId === undefined ? {} : { rootId }),
      fromBot: false,
      history: [input.text ?? ''],
      sentAt: Date.now(),
      editedAt: [],
    });
    const event = {
      schema: '2.0',
      header: { event_id: eventId, token: this.verificationToken, create_time: String(Date.now()), event_type: 'im.message.receive_v1', tenant_key: 'tenant1', app_id: this.appId },
      event: {
        sender: { sender_id: { open_id: input.openId, union_id: `on_${input.openId}`, user_id: null }, sender_type: input.senderType ?? 'user', tenant_key: 'tenant1' },
        message: {
          message_id: messageId,
          ...(rootId === undefined ? {} : { root_id: rootId, parent_id: input.parentId }),
          create_time: String(Date.now()),
          chat_id: input.chatId,
          chat_type: input.chatType,
          message_type: messageType,
          content,
          ...(input.mentionsBot ? { mentions: [{ key: '@_user_1', id: { open_id: this.botOpenId }, name: 'DeerFlow', tenant_key: 'tenant1' }] } : {}),
        },
      },
    };
    return { event, messageId, eventId };
  }

  /** A person writes: the event goes down every long connection. */
  sendUserMessage(input: UserMessageInput): { chatId: string; messageId: string; eventId: string } {
    const { event, messageId, eventId } = this.buildUserEvent(input);
    this.pushEvent(event, eventId, messageId, input.chatId);
    return { chatId: input.chatId, messageId, eventId };
  }

  /** Pushes a raw event (again, for a redelivery) to every connected client. */
  pushEvent(event: Record<string, unknown>, eventId: string, messageId: string, chatId: string): void {
    const frameId = `f_${++this.eventCount}`;
    const frame = encodeFrame({
      SeqID: 0,
      LogID: 0,
      service: 77,
      method: FRAME_METHOD.data,
      headers: [
        { key: 'type', value: 'event' },
        { key: 'message_id', value: frameId },
        { key: 'sum', value: '1' },
        { key: 'seq', value: '0' },
        { key: 'trace_id', value: `trace_${frameId}` },
      ],
      payload: new TextEncoder().encode(JSON.stringify(event)),
    });
    let record = this.events.find((e) => e.eventId === eventId);
    if (record === undefined) {
      record = { eventId, messageId, chatId, acked: false, pushes: 0 };
      this.events.push(record);
    }
    record.pushes += 1;
    const entry: { frame: Uint8Array; timer?: ReturnType<typeof setTimeout> } = { frame };
    this.pending.set(frameId, entry);
    const current = record;
    if (this.redeliverAfterMs > 0) {
      entry.timer = setTimeout(() => {
        if (this.pending.has(frameId)) {
          this.pending.delete(frameId);
          if (!current.acked) this.pushEvent(event, eventId, messageId, chatId);
        }
      }, this.redeliverAfterMs);
    }
    this.frameToEvent.set(frameId, current);
    for (const socket of this.sockets) socket.send(frame);
  }

  private readonly frameToEvent = new Map<string, PushedEvent>();

  /** The JSON body, encrypted with `encryptKey`, and the headers of an HTTP event callback. */
  static signedCallback(
    event: Record<string, unknown>,
    encryptKey: string,
    options: { timestampSeconds?: number; nonce?: string; badSignature?: boolean } = {},
  ): { body: string; headers: Record<string, string> } {
    const key = createHash('sha256').update(encryptKey).digest();
    const iv = randomBytes(16);
    const cipher = createCipheriv('aes-256-cbc', key, iv);
    const encrypted = Buffer.concat([iv, cipher.update(JSON.stringify(event), 'utf8'), cipher.final()]).toString('base64');
    const body = JSON.stringify({ encrypt: encrypted });
    const timestamp = String(options.timestampSeconds ?? Math.floor(Date.now() / 1000));
    const nonce = options.nonce ?? randomBytes(8).toString('hex');
    const signature = createHash('sha256').update(timestamp + nonce + encryptKey + body).digest('hex');
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-lark-request-timestamp': timestamp,
        'x-lark-request-nonce': nonce,
        'x-lark-signature': options.badSignature ? signature.replace(/^./, (c) => (c === '0' ? '1' : '0')) : signature,
      },
    };
  }

  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  private notify(): void {
    this.waiters.notify();
  }

  private accept(ws: WebSocket): void {
    this.sockets.add(ws);
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('message', (data: Buffer) => {
      const frame = decodeFrame(new Uint8Array(data));
      if (frame.method === FRAME_METHOD.control) {
        if (headerOf(frame, 'type') === 'ping') {
          const pong: Frame = { ...frame, headers: [{ key: 'type', value: 'pong' }], payload: new TextEncoder().encode(JSON.stringify({ PingInterval: 120 })) };
          ws.send(encodeFrame(pong));
        }
        return;
      }
      const frameId = headerOf(frame, 'message_id');
      if (frameId === undefined) return;
      const entry = this.pending.get(frameId);
      clearTimeout(entry?.timer);
      this.pending.delete(frameId);
      const record = this.frameToEvent.get(frameId);
      if (record) record.acked = true;
      this.notify();
    });
    this.notify();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = parseJson(raw);
    const url = new URL(req.url ?? '/', this.url);
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const at = Date.now();
    const answer = (status: number, payload: Record<string, unknown>, operation: RecordedCall['operation'], chatId?: string, headers: Record<string, string> = {}): void => {
      const code = typeof payload.code === 'number' ? payload.code : 0;
      this.calls.push({ operation, method, path, body, ...(chatId === undefined ? {} : { chatId }), at, status, code });
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
      this.notify();
    };

    if (path === '/callback/ws/endpoint') {
      if (body.AppID !== this.appId || body.AppSecret !== this.appSecret) return answer(200, { code: 1000040343, msg: 'invalid app' }, 'other');
      const { port } = this.server.address() as AddressInfo;
      return answer(200, {
        code: 0,
        data: { URL: `ws://127.0.0.1:${port}/ws?device_id=dev1&service_id=77`, ClientConfig: { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 1, ReconnectNonce: 0 } },
      }, 'other');
    }
    if (path === TOKEN_PATH) {
      const fault = this.takeFault('token');
      if (fault?.kind === 'business') return answer(200, { code: fault.code, msg: 'token error' }, 'token');
      if (fault?.kind === 'http') {
        this.calls.push({ operation: 'token', method, path, body, at, status: fault.status, code: typeof fault.json?.code === 'number' ? fault.json.code : 0 });
        const isJson = fault.json !== undefined;
        res.writeHead(fault.status, { 'content-type': isJson ? 'application/json' : 'text/html' });
        res.end(isJson ? JSON.stringify(fault.json) : `<html><body><h1>${fault.status}</h1></body></html>`);
        this.notify();
        return;
      }
      if (body.app_id !== this.appId || body.app_secret !== this.appSecret) return answer(200, { code: 10014, msg: 'app secret invalid' }, 'token');
      const token = `t-${++this.tokenCount}`;
      this.validTokens.add(token);
      return answer(200, { code: 0, msg: 'ok', tenant_access_token: token, expire: 7200 }, 'token');
    }

    this.countAppCall(method, path, at);
    const operation = this.operationOf(method, path);
    const chatId = this.chatOf(operation, path, url, body);
    const fault = operation === 'other' ? undefined : this.takeFault(operation);
    if (fault?.kind === 'expire-token') this.expireTokens();
    const auth = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!this.validTokens.has(auth)) return answer(400, { code: 99991663, msg: 'Invalid access token for authorization' }, operation, chatId);
    if (chatId !== undefined && (operation === 'send' || operation === 'patch')) {
      const until = this.blockedUntil.get(chatId) ?? 0;
      if (at < until) this.rateLimitViolations.push({ chatId, at });
    }
    if (fault?.kind === 'rate-limit') {
      if (chatId !== undefined) this.blockedUntil.set(chatId, at + fault.resetSeconds * 1000);
      return answer(429, { code: 99991400, msg: 'request trigger frequency limit' }, operation, chatId, { 'x-ogw-ratelimit-reset': String(fault.resetSeconds) });
    }
    if (fault?.kind === 'business') return answer(400, { code: fault.code, msg: 'card business error' }, operation, chatId);

    if (method === 'GET' && path === '/open-apis/bot/v3/info') {
      return answer(200, { code: 0, msg: 'ok', bot: { open_id: this.botOpenId, app_name: 'DeerFlow', activate_status: 2 } }, operation);
    }
    if (method === 'POST' && (path === '/open-apis/im/v1/images' || path === '/open-apis/im/v1/files')) {
      const isImage = path.endsWith('images');
      const key = `${isImage ? 'img' : 'file'}_v3_${++this.messageCount}`;
      this.uploads.push({ key, isImage, bytes: Buffer.byteLength(raw), at });
      return answer(200, { code: 0, msg: 'success', data: isImage ? { image_key: key } : { file_key: key } }, operation);
    }
    const reply = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(path);
    if (method === 'POST' && (path === '/open-apis/im/v1/messages' || reply)) {
      const parent = reply ? this.messages.find((m) => m.messageId === reply[1]) : undefined;
      if (reply && parent === undefined) return answer(400, { code: 230011, msg: 'message not found' }, operation, chatId);
      const messageId = `om_${(++this.messageCount).toString(16).padStart(8, '0')}`;
      const card = this.cardOf(String(body.msg_type), String(body.content));
      if (card === null) return answer(400, { code: 230099, msg: 'card not found' }, operation, chatId);
      card?.messageIds.push(messageId);
      const text = card ? [...card.elements.values()].join('\n') : textOf(String(body.msg_type), String(body.content));
      const rootId = parent === undefined ? undefined : (parent.rootId ?? parent.messageId);
      this.messages.push({
        messageId,
        chatId: chatId ?? '',
        text,
        msgType: String(body.msg_type),
        ...(parent === undefined ? {} : { replyTo: parent.messageId, rootId }),
        fromBot: true,
        history: [text],
        sentAt: at,
        editedAt: [],
      });
      return answer(200, { code: 0, msg: 'success', data: { message_id: messageId, chat_id: chatId, msg_type: body.msg_type } }, operation, chatId);
    }
    if (method === 'POST' && path === '/open-apis/cardkit/v1/cards') {
      const cardId = `card_${++this.messageCount}`;
      const data = parseJson(String(body.data)) as { body?: { elements?: { tag?: string; element_id?: string; content?: string }[] }; config?: { streaming_mode?: boolean } };
      const elements = new Map<string, string>();
      for (const element of data.body?.elements ?? []) if (element.tag === 'markdown' && element.element_id) elements.set(element.element_id, element.content ?? '');
      this.cards.set(cardId, { cardId, elements, isStreaming: data.config?.streaming_mode === true, lastSequence: 0, messageIds: [], updatedAt: [] });
      return answer(200, { code: 0, msg: 'success', data: { card_id: cardId } }, operation);
    }
    const cardPath = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/(elements\/([^/]+)\/content|settings)$/.exec(path);
    if (cardPath) {
      const card = this.cards.get(cardPath[1] as string);
      if (card === undefined) return answer(400, { code: 300301, msg: 'card not found' }, operation, chatId);
      const sequence = Number(body.sequence);
      if (!(sequence > card.lastSequence)) return answer(400, { code: 300317, msg: 'sequence number compare failed' }, operation, chatId);
      card.lastSequence = sequence;
      if (card.updatedAt.filter((t) => t > at - 1000).length >= 10) this.cardRateViolations.push({ cardId: card.cardId, at });
      card.updatedAt.push(at);
      if (cardPath[2] === 'settings') {
        const settings = parseJson(String(body.settings)) as { config?: { streaming_mode?: boolean } };
        if (settings.config?.streaming_mode === false) card.isStreaming = false;
        return answer(200, { code: 0, msg: 'success', data: {} }, operation, chatId);
      }
      const elementId = cardPath[3] as string;
      if (!card.elements.has(elementId)) return answer(400, { code: 300302, msg: 'element not found' }, operation, chatId);
      if (!card.isStreaming) return answer(400, { code: 300309, msg: 'streaming mode is closed' }, operation, chatId);
      card.elements.set(elementId, String(body.content));
      const text = [...card.elements.values()].join('\n');
      for (const message of this.messages.filter((m) => card.messageIds.includes(m.messageId))) {
        message.text = text;
        message.history.push(text);
        message.editedAt.push(at);
      }
      return answer(200, { code: 0, msg: 'success', data: {} }, operation, chatId);
    }
    const patch = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(path);
    if (method === 'PATCH' && patch) {
      const message = this.messages.find((m) => m.messageId === patch[1] && m.fromBot);
      if (message === undefined || message.msgType !== 'interactive') return answer(400, { code: 230001, msg: 'not an interactive message' }, operation, chatId);
      const text = textOf('interactive', String(body.content));
      message.text = text;
      message.history.push(text);
      message.editedAt.push(at);
      return answer(200, { code: 0, msg: 'success', data: {} }, operation, chatId);
    }
    const reaction = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reactions$/.exec(path);
    if (method === 'POST' && reaction) {
      const emoji = String((body.reaction_type as { emoji_type?: string } | undefined)?.emoji_type);
      this.reactions.push({ messageId: reaction[1] as string, emoji, at });
      return answer(200, { code: 0, msg: 'success', data: { reaction_id: `r_${this.reactions.length}` } }, operation, chatId);
    }
    const resource = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(path);
    if (method === 'GET' && resource) {
      const bytes = this.resources.get(resource[2] as string);
      if (bytes === undefined) return answer(400, { code: 234003, msg: 'resource not found' }, operation, chatId);
      this.calls.push({ operation, method, path, body, at, status: 200, code: 0 });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) }).end(Buffer.from(bytes));
      this.notify();
      return;
    }
    return answer(404, { code: 404, msg: `no route ${method} ${path}` }, 'other');
  }

  /** The card entity an interactive message refers to; undefined for an inline card, null for an unknown card_id. */
  private cardOf(msgType: string, content: string): FakeCard | undefined | null {
    if (msgType !== 'interactive') return undefined;
    const parsed = parseJson(content) as { type?: string; data?: { card_id?: string } };
    if (parsed.type !== 'card') return undefined;
    return this.cards.get(parsed.data?.card_id ?? '') ?? null;
  }

  /** Feishu's frequency control: per API, per app, "1000 次/分钟、50 次/秒". */
  private countAppCall(method: string, path: string, at: number): void {
    const api = `${method} ${path.replace(/\/(messages|cards|resources|elements)\/[^/]+/g, '/$1/:id')}`;
    const times = (this.callsByApi.get(api) ?? []).filter((t) => t > at - 60_000);
    times.push(at);
    this.callsByApi.set(api, times);
    if (times.filter((t) => t > at - 1000).length > 50 || times.length > 1000) this.appRateViolations.push({ api, at });
  }

  private takeFault(operation: FakeOperation): FakeFault | undefined {
    const index = this.faults.findIndex((f) => f.operation === operation);
    if (index < 0) return undefined;
    const [entry] = this.faults.splice(index, 1);
    return entry?.fault;
  }

  private operationOf(method: string, path: string): RecordedCall['operation'] {
    if (method === 'POST' && (path === '/open-apis/im/v1/messages' || path.endsWith('/reply'))) return 'send';
    if (method === 'PATCH' && path.startsWith('/open-apis/im/v1/messages/')) return 'patch';
    if (method === 'PUT' && /^\/open-apis\/cardkit\/v1\/cards\/[^/]+\/elements\//.test(path)) return 'patch';
    if (path.startsWith('/open-apis/cardkit/')) return 'card';
    if (path.endsWith('/reactions')) return 'reaction';
    if (path.includes('/resources/')) return 'resource';
    return 'other';
  }

  private chatOf(operation: RecordedCall['operation'], path: string, url: URL, body: Record<string, unknown>): string | undefined {
    if (path === '/open-apis/im/v1/messages' && url.searchParams.get('receive_id_type') === 'chat_id') return String(body.receive_id);
    const cardId = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\//.exec(path)?.[1];
    if (cardId !== undefined) {
      const messageId = this.cards.get(cardId)?.messageIds[0];
      return this.messages.find((m) => m.messageId === messageId)?.chatId;
    }
    const id = /^\/open-apis\/im\/v1\/messages\/([^/]+)/.exec(path)?.[1];
    if (id === undefined || operation === 'other') return undefined;
    return this.messages.find((m) => m.messageId === id)?.chatId;
  }
}

/** What a message shows: a card's markdown elements joined by newlines, or a text's text. */
export function textOf(msgType: string, content: string): string {
  try {
    const parsed = JSON.parse(content) as { text?: string; body?: { elements?: { tag?: string; content?: string }[] }; elements?: { tag?: string; content?: string }[] };
    if (msgType === 'text') return parsed.text ?? '';
    const elements = parsed.body?.elements ?? parsed.elements ?? [];
    return elements.filter((e) => e.tag === 'markdown').map((e) => e.content ?? '').join('\n');
  } catch {
    return '';
  }
}

function parseJson(raw: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
