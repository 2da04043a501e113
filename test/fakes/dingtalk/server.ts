import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { ChatLog } from '../chat-log.js';
import { closeHttpWithWebSockets } from '../http-with-websockets.js';
import { Waiters } from '../waiters.js';
import type { FakeBotMessage } from './chat.js';
import { type Delivered, type FakeDingTalkOptions, type Fault, parseBody, type RecordedCall, readBody, type UserMessageInput } from './wire.js';

export type { Delivered, FakeDingTalkOptions, Fault, RecordedCall, UserMessageInput } from './wire.js';

/**
 * A fake DingTalk on 127.0.0.1 speaking the wire formats of sdk-recipes §5:
 * - Gateway `POST /v1.0/gateway/connections/open` → `{endpoint, ticket}`; the stream websocket at
 *   `/connect?ticket=…` sends SYSTEM `CONNECTED`/`REGISTERED`, SYSTEM `ping` (echo recorded),
 *   CALLBACK robot messages and EVENTs, records acks, and REDELIVERS callbacks not acked within
 *   `redeliverAfterMs` (DingTalk: about 60 s).
 * - OpenAPI with `x-acs-dingtalk-access-token`: `/v1.0/oauth2/accessToken` (and legacy
 *   `GET /gettoken`), robot sends, AI cards (createAndDeliver, `PUT /v1.0/card/streaming`), file
 *   download and upload. Tokens expire; `expireTokens()` makes every issued one invalid.
 * - Session webhooks `POST /robot/sendBySession?session=<msgId>`, valid until their expiry.
 * Every HTTP call is recorded with its arrival time and the chat it writes into; faults are
 * injected per path, and a rate limit blocks the chat of the call it answered.
 */

interface PendingCallback {
  streamMessageId: string;
  frame: string;
  deliveries: number[];
  isAcked: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

export const GROUP_CONVERSATION = 'cidGROUP1';
const OPEN_API_PATHS = new Set([
  '/v1.0/robot/oToMessages/batchSend',
  '/v1.0/robot/groupMessages/send',
  '/v1.0/card/instances/createAndDeliver',
  '/v1.0/card/streaming',
  '/v1.0/robot/messageFiles/download',
  '/v1.0/files/upload',
]);

export class FakeDingTalk {
  readonly clientId = 'dingfakeappkey';
  readonly clientSecret = 'fake-app-secret';
  readonly chatbotUserId = '$:LWCP_v1:$fakebot';
  readonly corpId = 'dingfakecorp';
  readonly calls: RecordedCall[] = [];
  readonly acks: { streamMessageId: string; at: number }[] = [];
  /** EVENT acks received: the frame's messageId and the ack's `data`. */
  readonly eventAcks: { messageId: string; data: string }[] = [];
  /** Ping echoes received, by the ping's messageId. */
  readonly pongs: { messageId: string; at: number }[] = [];
  readonly chats = new ChatLog<FakeBotMessage>();
  /** Bytes uploaded by the bot, by media id. */
  readonly uploads = new Map<string, { type: string; name: string; bytes: Uint8Array }>();
  connectionsOpened = 0;
  /** Non-final card updates or sends into a chat while a rate limit on it ran. */
  readonly rateLimitViolations: { chatId: string; at: number }[] = [];

  private readonly options: Required<FakeDingTalkOptions>;
  private readonly tokens = new Map<string, number>();
  private readonly tickets = new Set<string>();
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, PendingCallback>();
  private readonly faults = new Map<string, Fault[]>();
  private readonly sessions = new Map<string, { chatId: string; expiresAt: number }>();
  private readonly downloads = new Map<string, Uint8Array>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly waiters = new Waiters('FakeDingTalk', { pollMs: 20 });
  private readonly wss = new WebSocketServer({ noServer: true });
  private server: Server | undefined;
  private port = 0;
  private nextId = 1;

  constructor(options: FakeDingTalkOptions = {}) {
    this.options = {
      redeliverAfterMs: options.redeliverAfterMs ?? 60_000,
      tokenExpiresInSeconds: options.tokenExpiresInSeconds ?? 7200,
      sessionWebhookTtlMs: options.sessionWebhookTtlMs ?? 90 * 60 * 1000,
    };
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'InternalError', message: String(error) }));
      });
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const callback of this.pending.values()) clearTimeout(callback.timer);
    const server = this.server;
    this.server = undefined;
    await closeHttpWithWebSockets(server, this.wss, this.sockets);
  }

  // ---- what tests do ----

  /** A person writes to the robot; resolves once the frame is on an open socket. */
  async sendUserMessage(input: UserMessageInput): Promise<Delivered> {
    const conversationId = input.chat === 'private' ? `cidP2P${input.userId}` : (input.conversationId ?? GROUP_CONVERSATION);
    const msgId = `msg${this.nextId++}`;
    const now = Date.now();
    const chatId = input.chat === 'private' ? input.userId : conversationId;
    this.sessions.set(msgId, { chatId, expiresAt: now + this.options.sessionWebhookTtlMs });
    const msgtype = input.msgtype ?? 'text';
    const data: Record<string, unknown> = {
      conversationId,
      chatbotCorpId: this.corpId,
      chatbotUserId: this.chatbotUserId,
      msgId,
      senderNick: `Nick ${input.userId}`,
      isAdmin: false,
      ...(input.hasNoStaffId ? {} : { senderStaffId: input.userId }),
      sessionWebhookExpiredTime: now + this.options.sessionWebhookTtlMs,
      createAt: now,
      senderCorpId: this.corpId,
      conversationType: input.chat === 'private' ? '1' : '2',
      senderId: input.senderId ?? `$:LWCP_v1:$${input.userId}`,
      ...(input.chat === 'group' ? { conversationTitle: 'Fake group', isInAtList: true } : {}),
      sessionWebhook: `${this.apiUrl}/robot/sendBySession?session=${msgId}`,
      robotCode: this.clientId,
      msgtype,
      // `text.content` is the typed text as is (DingTalk has removed the robot's own @ in a group).
      ...(msgtype === 'text'
        ? {
            text: {
              content: input.text ?? '',
              ...(input.quotedMessageId === undefined
                ? {}
                : { isReplyMsg: true, repliedMsg: { msgId: input.quotedMessageId, msgType: 'text', senderId: 'someone', content: { text: 'the quoted text' } } }),
            },
          }
        : {}),
      ...(input.content === undefined ? {} : { content: input.content }),
      atUsers: [],
    };
    const streamMessageId = await this.deliverCallback(data);
    return { msgId, chatId, conversationId, streamMessageId };
  }

  /** Pushes a raw robot callback `data` object; resolves with the frame's messageId. */
  async deliverCallback(data: Record<string, unknown>): Promise<string> {
    const streamMessageId = `stream-${randomUUID()}`;
    const frame = JSON.stringify({
      specVersion: '1.0',
      type: 'CALLBACK',
      headers: { appId: this.clientId, connectionId: 'conn', contentType: 'application/json', messageId: streamMessageId, time: String(Date.now()), topic: '/v1.0/im/bot/messages/get' },
      data: JSON.stringify(data),
    });
    const callback: PendingCallback = { streamMessageId, frame, deliveries: [], isAcked: false };
    this.pending.set(streamMessageId, callback);
    await this.waitFor(() => this.openSocket() !== undefined, 10_000);
    this.push(callback);
    return streamMessageId;
  }

  /** Sends a SYSTEM ping on every socket; its echo lands in `pongs`. */
  ping(): string {
    const messageId = `ping-${randomUUID()}`;
    for (const socket of this.sockets) socket.send(this.systemFrame('ping', messageId, JSON.stringify({ opaque: messageId })));
    return messageId;
  }

  /** Sends an EVENT frame (an org event); the SDK acks it itself. */
  sendEvent(eventType: string): string {
    const messageId = `event-${randomUUID()}`;
    for (const socket of this.sockets) {
      socket.send(
        JSON.stringify({ specVersion: '1.0', type: 'EVENT', headers: { appId: this.clientId, connectionId: 'conn', contentType: 'application/json', messageId, time: String(Date.now()), topic: '*', eventType }, data: '{}' }),
      );
    }
    return messageId;
  }

  /** How many times a callback was pushed. */
  deliveriesOf(streamMessageId: string): number[] {
    return [...(this.pending.get(streamMessageId)?.deliveries ?? [])];
  }

  isAcked(streamMessageId: string): boolean {
    return this.pending.get(streamMessageId)?.isAcked ?? false;
  }

  /** Sends SYSTEM `disconnect` on every socket: DingTalk asks the client to reconnect. */
  askToReconnect(): void {
    for (const socket of this.sockets) socket.send(this.systemFrame('disconnect', `sys-${randomUUID()}`));
  }

  /** Cuts every stream connection (as a network drop). */
  dropConnections(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  /** Stream websockets open now (one per connected client). */
  connectionCount(): number {
    return [...this.sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  /** Every access token issued so far stops working (answers 401 InvalidAuthentication). */
  expireTokens(): void {
    this.tokens.clear();
  }

  /** Every session webhook handed out so far is expired. */
  expireSessionWebhooks(): void {
    for (const session of this.sessions.values()) session.expiresAt = 0;
  }

  /** The next call(s) to `path` answer with `fault`. */
  failNext(path: string, fault: Fault, times = 1): void {
    const list = this.faults.get(path) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(path, list);
  }

  /** Calls to `path` answer normally again, whatever faults were still queued for it. */
  clearFaults(path: string): void {
    this.faults.delete(path);
  }

  /** Makes `bytes` downloadable by the returned download code. */
  addDownload(bytes: Uint8Array): string {
    const code = `dlcode${this.nextId++}`;
    this.downloads.set(code, bytes);
    return code;
  }

  botMessages(chatId: string): FakeBotMessage[] {
    return this.chats.inChat(chatId);
  }

  /** Resolves with the predicate's first truthy value, checked after every call; rejects after `timeoutMs` (default 5000). */
  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  // ---- the stream ----

  private openSocket(): WebSocket | undefined {
    return [...this.sockets].find((s) => s.readyState === s.OPEN);
  }

  private push(callback: PendingCallback): void {
    const socket = this.openSocket();
    if (socket === undefined) return; // Pushed again on the next connection.
    callback.deliveries.push(Date.now());
    socket.send(callback.frame);
    clearTimeout(callback.timer);
    callback.timer = setTimeout(() => {
      if (!callback.isAcked) this.push(callback);
    }, this.options.redeliverAfterMs);
    this.notify();
  }

  private systemFrame(topic: string, messageId: string, data = '{}'): string {
    return JSON.stringify({ specVersion: '1.0', type: 'SYSTEM', headers: { appId: this.clientId, connectionId: 'conn', contentType: 'application/json', messageId, time: String(Date.now()), topic }, data });
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', this.apiUrl);
    const ticket = url.searchParams.get('ticket') ?? '';
    if (url.pathname !== '/connect' || !this.tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.connectionsOpened++;
      this.sockets.add(ws);
      ws.on('close', () => {
        this.sockets.delete(ws);
        this.notify();
      });
      ws.on('message', (raw) => this.onClientFrame(String(raw)));
      ws.send(this.systemFrame('CONNECTED', `sys-${randomUUID()}`));
      ws.send(this.systemFrame('REGISTERED', `sys-${randomUUID()}`));
      // Callbacks that were never acked go out again on a new connection.
      for (const callback of this.pending.values()) if (!callback.isAcked && callback.deliveries.length > 0) this.push(callback);
      this.notify();
    });
  }

  private onClientFrame(text: string): void {
    const frame = JSON.parse(text) as { headers?: { messageId?: string }; data?: string };
    const messageId = frame.headers?.messageId ?? '';
    const callback = this.pending.get(messageId);
    if (callback) {
      callback.isAcked = true;
      clearTimeout(callback.timer);
      this.acks.push({ streamMessageId: messageId, at: Date.now() });
    } else if (messageId.startsWith('ping-')) {
      this.pongs.push({ messageId, at: Date.now() });
    } else if (messageId.startsWith('event-')) {
      this.eventAcks.push({ messageId, data: String(frame.data) });
    }
    this.notify();
  }

  // ---- HTTP ----

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.apiUrl);
    const raw = await readBody(req);
    const body = await parseBody(raw, req.headers['content-type']);
    const token = req.headers['x-acs-dingtalk-access-token'];
    const chatId = this.chatOf(url.pathname, body, url);
    const call: RecordedCall = {
      method: req.method ?? 'GET',
      path: url.pathname,
      body,
      at: Date.now(),
      status: 200,
      ...(typeof token === 'string' ? { token } : {}),
      ...(chatId === undefined ? {} : { chatId }),
    };
    this.calls.push(call);
    const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      const code = (payload as { code?: unknown }).code;
      if (typeof code === 'string') call.code = code;
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(payload));
      this.notify();
      return true as const;
    };
    if (url.pathname.startsWith('/files/')) {
      const bytes = this.downloads.get(url.pathname.slice('/files/'.length));
      call.status = bytes ? 200 : 404;
      res.writeHead(call.status, { 'content-type': 'application/octet-stream', 'content-length': String(bytes?.byteLength ?? 0) }).end(bytes ?? Buffer.alloc(0));
      this.notify();
      return;
    }
    const handled = this.auth(url, call, answer) ?? this.fault(call, answer);
    if (handled) return;
    this.handle(url, call, answer);
  }

  /** Gateway, tokens and the OpenAPI's token check; true when answered. */
  private auth(url: URL, call: RecordedCall, answer: Answer): true | undefined {
    const { body } = call;
    if (url.pathname === '/v1.0/gateway/connections/open') {
      // Faults queued for the gateway answer before the credentials are checked (e.g. a 503).
      if (this.fault(call, answer)) return true;
      if (body.clientId !== this.clientId || body.clientSecret !== this.clientSecret) return answer(401, { code: 'InvalidAuthentication', message: 'bad client' });
      const ticket = `tkt-${randomUUID()}`;
      this.tickets.add(ticket);
      return answer(200, { endpoint: `ws://127.0.0.1:${this.port}/connect`, ticket });
    }
    if (url.pathname === '/v1.0/oauth2/accessToken' || url.pathname === '/gettoken') {
      const isLegacy = url.pathname === '/gettoken';
      const key = isLegacy ? url.searchParams.get('appkey') : body.appKey;
      const secret = isLegacy ? url.searchParams.get('appsecret') : body.appSecret;
      if (key !== this.clientId || secret !== this.clientSecret) return answer(400, { code: 'invalidClientIdOrSecret', message: 'bad app' });
      const token = `token-${randomUUID()}`;
      const expiresIn = this.options.tokenExpiresInSeconds;
      this.tokens.set(token, Date.now() + expiresIn * 1000);
      return answer(200, isLegacy ? { errcode: 0, access_token: token, expires_in: expiresIn } : { accessToken: token, expireIn: expiresIn });
    }
    if (OPEN_API_PATHS.has(url.pathname)) {
      const token = call.token ?? '';
      const expiresAt = this.tokens.get(token);
      if (expiresAt === undefined || expiresAt <= Date.now()) return answer(401, { code: 'InvalidAuthentication', message: 'token invalid' });
    }
    return undefined;
  }

  private fault(call: RecordedCall, answer: Answer): true | undefined {
    const fault = this.faults.get(call.path)?.shift();
    if (fault === undefined) return undefined;
    if (fault.kind === 'hang') {
      this.notify();
      return true;
    }
    if (fault.kind === 'rate-limit') {
      if (call.chatId !== undefined) this.blockedUntil.set(call.chatId, Date.now() + fault.retryAfterSeconds * 1000);
      return answer(429, { code: 'Throttling.Api', message: 'qps limit' }, { 'retry-after': String(fault.retryAfterSeconds) });
    }
    if (fault.kind === 'business') return answer(fault.status ?? 400, { code: fault.code, message: 'business error' });
    return answer(fault.status, { code: 'ServiceUnavailable', message: 'injected' });
  }

  private handle(url: URL, call: RecordedCall, answer: Answer): true {
    const { body, at, chatId } = call;
    if (chatId !== undefined && (this.blockedUntil.get(chatId) ?? 0) > at) this.rateLimitViolations.push({ chatId, at });
    switch (url.pathname) {
      case '/robot/sendBySession': {
        const messageId = url.searchParams.get('session') ?? '';
        const session = this.sessions.get(messageId);
        if (!session || session.expiresAt <= at) return answer(200, { errcode: 400013, errmsg: 'session webhook expired' });
        const isMarkdown = body.msgtype === 'markdown';
        const text = String(isMarkdown ? (body.markdown as { text?: string }).text : (body.text as { content?: string }).content);
        this.chats.add({ chatId: session.chatId, kind: isMarkdown ? 'markdown' : 'text', via: 'session', text, replyTo: messageId, sentAt: at, isFinalized: true });
        return answer(200, { errcode: 0, errmsg: 'ok' });
      }
      case '/v1.0/robot/oToMessages/batchSend':
      case '/v1.0/robot/groupMessages/send': {
        if (body.robotCode !== this.clientId) return answer(400, { code: 'invalidParameter.robotCode', message: 'robot' });
        const param = JSON.parse(String(body.msgParam)) as Record<string, string>;
        const kinds: Record<string, 'markdown' | 'text' | 'image' | 'file'> = { sampleMarkdown: 'markdown', sampleText: 'text', sampleImageMsg: 'image', sampleFile: 'file' };
        const kind = kinds[String(body.msgKey)];
        if (kind === undefined || chatId === undefined) return answer(400, { code: 'invalidParameter', message: 'msgKey' });
        const text = kind === 'markdown' ? (param.text ?? '') : kind === 'text' ? (param.content ?? '') : kind === 'image' ? `[image ${param.photoURL}]` : `[file ${param.fileName}]`;
        this.chats.add({
          chatId,
          kind,
          via: 'robot',
          text,
          sentAt: at,
          isFinalized: true,
          ...(kind === 'image' ? { mediaId: String(param.photoURL) } : {}),
          ...(kind === 'file' ? { mediaId: String(param.mediaId), fileName: String(param.fileName) } : {}),
        });
        return answer(200, { processQueryKey: `pqk-${this.nextId++}` });
      }
      case '/v1.0/card/instances/createAndDeliver': {
        const outTrackId = String(body.outTrackId ?? '');
        if (!body.cardTemplateId || !outTrackId || chatId === undefined) return answer(400, { code: 'param.invalid', message: 'card' });
        if (this.chats.find(outTrackId)) return answer(400, { code: 'card.outTrackIdExists', message: 'duplicate' });
        const content = String((body.cardData as { cardParamMap?: { content?: string } })?.cardParamMap?.content ?? '');
        const replyTo = outTrackId.split('.')[0];
        // The card takes streaming updates until one finalizes it.
        this.chats.add({ id: outTrackId, chatId, kind: 'card', via: 'card', text: content, sentAt: at, isFinalized: false, ...(replyTo && this.sessions.has(replyTo) ? { replyTo } : {}) });
        return answer(200, { success: true, result: { outTrackId, deliverResults: [{ success: true }] } });
      }
      case '/v1.0/card/streaming': {
        const card = this.chats.find(String(body.outTrackId ?? ''));
        if (card?.kind !== 'card') return answer(400, { code: 'card.notFound', message: 'no such card' });
        if (card.isFinalized) return answer(400, { code: 'card.streamingFinished', message: 'finalized' });
        if (body.key !== 'content' || body.isFull !== true || typeof body.guid !== 'string') return answer(400, { code: 'param.invalid', message: 'streaming' });
        this.chats.edit(card, String(body.content ?? ''), at);
        card.isFinalized = body.isFinalize === true;
        return answer(200, { success: true });
      }
      case '/v1.0/robot/messageFiles/download': {
        const code = String(body.downloadCode ?? '');
        if (!this.downloads.has(code)) return answer(400, { code: 'invalidParameter.downloadCode', message: 'code' });
        return answer(200, { downloadUrl: `${this.apiUrl}/files/${code}` });
      }
      case '/v1.0/files/upload': {
        const mediaId = `@media${this.nextId++}`;
        const file = body.file as { name: string; bytes: Uint8Array } | undefined;
        if (!file) return answer(400, { code: 'invalidParameter.file', message: 'file' });
        this.uploads.set(mediaId, { type: String(body.type), name: file.name, bytes: file.bytes });
        return answer(200, { mediaId });
      }
      default:
        return answer(404, { code: 'NotFound', message: 'no such API' });
    }
  }

  /** The chat (adapter's chat id) a request writes into. */
  private chatOf(path: string, body: Record<string, unknown>, url: URL): string | undefined {
    if (path === '/v1.0/robot/oToMessages/batchSend') return (body.userIds as string[] | undefined)?.[0];
    if (path === '/v1.0/robot/groupMessages/send') return body.openConversationId as string | undefined;
    if (path === '/v1.0/card/instances/createAndDeliver') return String(body.openSpaceId ?? '').replace(/^dtv1\.card\/\/IM_(ROBOT|GROUP)\./, '') || undefined;
    if (path === '/v1.0/card/streaming') return this.chats.find(String(body.outTrackId ?? ''))?.chatId;
    if (path === '/robot/sendBySession') return this.sessions.get(url.searchParams.get('session') ?? '')?.chatId;
    return undefined;
  }

  private notify(): void {
    this.waiters.notify();
  }
}

type Answer = (status: number, payload: unknown, headers?: Record<string, string>) => true;

