import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { ChatLog } from '../chat-log.js';
import { closeHttpWithWebSockets } from '../http-with-websockets.js';
import { Waiters } from '../waiters.js';
import type { FakeBotMessage } from './chat.js';
import { type Delivered, encryptMedia, type FrameFault, type RecordedFrame, type UserMessageInput } from './wire.js';

export type { Delivered, FrameFault, RecordedFrame, UserMessageInput } from './wire.js';

/**
 * A fake WeCom AI bot long connection on 127.0.0.1, speaking the frames of path/101463 as
 * `@wecom/aibot-node-sdk` sends them: `aibot_subscribe` (bot id and secret checked; a second
 * authenticated connection gets the first a `disconnected_event` and closes it), `ping`,
 * `aibot_msg_callback` out, `aibot_respond_msg` stream replies (one message per `stream.id`, its
 * content replaced until `finish`; later updates and streams older than `streamLifetimeMs` get
 * errcode 846608), `aibot_send_msg` (markdown, image, file; only into chats that wrote first),
 * and `aibot_upload_media_init|chunk|finish` (≤ 100 chunks of ≤ 512 KiB, md5 checked). Media of
 * members' messages is served encrypted over HTTP. Faults: errcodes (45009 rate limits close the
 * chat), unanswered frames, cut sockets, refused credentials, redelivered callbacks, 5xx downloads.
 */

const GROUP_CHAT = 'wrGROUP1';
const MAX_CONTENT_BYTES = 20_480;
const MAX_CHUNK_BYTES = 512 * 1024;
const MAX_CHUNKS = 100;

/** Answers the frame being handled; `true` so handlers can end with it. */
type Answer = (errcode: number, errmsg?: string, body?: Record<string, unknown>) => true;

interface Callback {
  msgid: string;
  chatId: string;
  frame: Record<string, unknown>;
}

interface Upload {
  type: string;
  filename: string;
  totalSize: number;
  totalChunks: number;
  md5: string;
  chunks: Map<number, Buffer>;
}

export interface FakeWeComOptions {
  /** A stream takes updates this long after its first frame (WeCom: 6 minutes). */
  streamLifetimeMs?: number;
}

export class FakeWeCom {
  readonly botId = 'aibFAKEBOT01';
  readonly secret = 'fake-bot-secret';
  readonly frames: RecordedFrame[] = [];
  readonly chats = new ChatLog<FakeBotMessage>();
  /** Uploaded media by media id. */
  readonly uploads = new Map<string, { type: string; filename: string; bytes: Buffer }>();
  /** Stream updates and sends into a chat while a rate limit on it ran. */
  readonly rateLimitViolations: { chatId: string; at: number }[] = [];
  /** Content over 20480 UTF-8 bytes the bot sent (answered with an error). */
  readonly oversized: RecordedFrame[] = [];
  connectionsOpened = 0;
  authentications = 0;
  /** Media downloads served, by status. */
  readonly downloads: { status: number; at: number }[] = [];

  private readonly streamLifetimeMs: number;
  private readonly sockets = new Set<WebSocket>();
  private authenticated: WebSocket | undefined;
  private readonly callbacks = new Map<string, Callback>();
  private readonly callbacksByMsgid = new Map<string, Callback>();
  private readonly streamStartedAt = new Map<string, number>();
  private readonly faults = new Map<string, FrameFault[]>();
  private readonly uploadsInProgress = new Map<string, Upload>();
  private readonly media = new Map<string, Buffer>();
  private readonly blockedUntil = new Map<string, number>();
  /** Chats a member wrote in: proactive messages may go there. */
  private readonly knownChats = new Set<string>();
  private authRefusals = 0;
  private downloadFailures: number[] = [];
  private readonly waiters = new Waiters('FakeWeCom', { pollMs: 20 });
  private readonly wss = new WebSocketServer({ noServer: true });
  private server: Server | undefined;
  private port = 0;
  private nextId = 1;

  constructor(options: FakeWeComOptions = {}) {
    this.streamLifetimeMs = options.streamLifetimeMs ?? 6 * 60 * 1000;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.serveMedia(req, res));
    server.on('upgrade', (req, socket, head) => this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeHttpWithWebSockets(server, this.wss, this.sockets);
  }

  // ---- what tests do ----

  /** A member writes to the bot; resolves once the callback is on an authenticated connection. */
  async sendUserMessage(input: UserMessageInput): Promise<Delivered> {
    const msgid = `msg${this.nextId++}`;
    const chatId = input.chat === 'private' ? input.userId : (input.chatId ?? GROUP_CHAT);
    this.knownChats.add(chatId);
    const body: Record<string, unknown> = {
      msgid,
      aibotid: this.botId,
      chattype: input.chat === 'private' ? 'single' : 'group',
      ...(input.chat === 'group' ? { chatid: chatId } : {}),
      from: { userid: input.userId },
      create_time: Math.floor(Date.now() / 1000),
      ...this.content(input),
      ...(input.quote === undefined ? {} : { quote: input.quote }),
    };
    const callback: Callback = { msgid, chatId, frame: { cmd: 'aibot_msg_callback', headers: { req_id: '' }, body } };
    this.callbacksByMsgid.set(msgid, callback);
    const reqId = await this.deliver(callback);
    return { msgid, reqId, chatId };
  }

  /** WeCom calls back with a message again (its network retry): same `msgid`, a new `req_id`. */
  async redeliver(msgid: string): Promise<string> {
    const callback = this.callbacksByMsgid.get(msgid);
    if (!callback) throw new Error(`FakeWeCom: no message ${msgid}`);
    return this.deliver(callback);
  }

  /** Cuts every socket (the SDK reconnects). */
  dropConnections(): void {
    // At once, not at the close event: a message sent right after must wait for the reconnect.
    this.authenticated = undefined;
    for (const socket of this.sockets) socket.terminate();
  }

  /** The next `times` subscriptions are refused (a reset secret). */
  refuseAuth(times = 1): void {
    this.authRefusals += times;
  }

  /** The next `times` frames of `cmd` get `fault`. */
  failNext(cmd: string, fault: FrameFault, times = 1): void {
    const queue = this.faults.get(cmd) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(cmd, queue);
  }

  /** Every stream so far is past WeCom's 6 minutes: updates get errcode 846608. */
  expireStreams(): void {
    for (const id of this.streamStartedAt.keys()) this.streamStartedAt.set(id, Number.NEGATIVE_INFINITY);
  }

  /** The next `times` media downloads answer HTTP `status`. */
  failDownloads(status: number, times = 1): void {
    for (let i = 0; i < times; i++) this.downloadFailures.push(status);
  }

  isAuthenticated(): boolean {
    return this.authenticated !== undefined;
  }

  botMessages(chatId: string): FakeBotMessage[] {
    return this.chats.inChat(chatId);
  }

  /** Frames of `cmd` the bot sent. */
  framesOf(cmd: string): RecordedFrame[] {
    return this.frames.filter((f) => f.cmd === cmd);
  }

  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  // ---- the wire ----

  private content(input: UserMessageInput): Record<string, unknown> {
    const msgtype = input.msgtype ?? 'text';
    const media = (bytes: Uint8Array) => this.addMedia(bytes);
    switch (msgtype) {
      case 'text':
        return { msgtype, text: { content: input.text ?? '' } };
      case 'voice':
        return { msgtype, voice: { content: input.text ?? '' } };
      case 'image':
      case 'file':
        return { msgtype, [msgtype]: media(input.media ?? new Uint8Array([1, 2, 3])) };
      default:
        return {
          msgtype,
          mixed: {
            msg_item: (input.items ?? []).map((item) =>
              'text' in item ? { msgtype: 'text', text: { content: item.text } } : { msgtype: 'image', image: media(item.image) },
            ),
          },
        };
    }
  }

  private addMedia(bytes: Uint8Array): { url: string; aeskey: string } {
    const id = randomUUID();
    const { encrypted, aeskey } = encryptMedia(bytes);
    this.media.set(id, encrypted);
    return { url: `http://127.0.0.1:${this.port}/media/${id}`, aeskey };
  }

  private async deliver(callback: Callback): Promise<string> {
    const socket = await this.waitFor(() => this.authenticated, 15_000);
    const reqId = `req${this.nextId++}`;
    this.callbacks.set(reqId, callback);
    socket.send(JSON.stringify({ ...callback.frame, headers: { req_id: reqId } }));
    this.notify();
    return reqId;
  }

  private accept(ws: WebSocket): void {
    this.sockets.add(ws);
    this.connectionsOpened++;
    ws.on('message', (data) => this.onFrame(ws, String(data)));
    ws.on('close', () => {
      this.sockets.delete(ws);
      if (this.authenticated === ws) this.authenticated = undefined;
      this.notify();
    });
    this.notify();
  }

  private onFrame(ws: WebSocket, text: string): void {
    let frame: { cmd?: string; headers?: { req_id?: string }; body?: Record<string, unknown> };
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    const cmd = frame.cmd ?? '';
    const reqId = frame.headers?.req_id ?? '';
    const body = frame.body ?? {};
    const recorded: RecordedFrame = { cmd, reqId, body, at: Date.now() };
    this.frames.push(recorded);
    const answer: Answer = (errcode, errmsg = 'ok', answerBody) => {
      recorded.errcode = errcode;
      ws.send(JSON.stringify({ headers: { req_id: reqId }, errcode, errmsg, ...(answerBody ? { body: answerBody } : {}) }));
      return true;
    };
    try {
      if (cmd === 'aibot_subscribe') this.subscribe(ws, body, answer);
      else if (ws !== this.authenticated) answer(40001, 'not subscribed');
      else if (cmd === 'ping') answer(0);
      else if (!this.injectedFault(ws, cmd, recorded, answer)) this.handle(cmd, reqId, body, recorded, answer);
    } finally {
      this.notify();
    }
  }

  private subscribe(ws: WebSocket, body: Record<string, unknown>, answer: Answer): void {
    if (this.authRefusals > 0 || body.bot_id !== this.botId || body.secret !== this.secret) {
      if (this.authRefusals > 0) this.authRefusals--;
      answer(40058, 'invalid bot_id or secret');
      return;
    }
    const previous = this.authenticated;
    this.authenticated = ws;
    this.authentications++;
    answer(0);
    if (previous && previous !== ws) {
      // path/101463: the newer connection wins; the old one is told, then closed.
      previous.send(
        JSON.stringify({
          cmd: 'aibot_event_callback',
          headers: { req_id: `evt${this.nextId++}` },
          body: { msgid: `evt${this.nextId++}`, aibotid: this.botId, msgtype: 'event', event: { eventtype: 'disconnected_event' } },
        }),
      );
      previous.close();
    }
  }

  /** True when a fault took the frame. */
  private injectedFault(ws: WebSocket, cmd: string, recorded: RecordedFrame, answer: Answer): boolean {
    const fault = this.faults.get(cmd)?.shift();
    if (!fault) return false;
    recorded.chatId = this.chatOf(cmd, recorded.reqId, recorded.body);
    if (fault.kind === 'silent') return true;
    if (fault.kind === 'drop') {
      if (this.authenticated === ws) this.authenticated = undefined;
      ws.terminate();
      return true;
    }
    if (fault.blockMs !== undefined && recorded.chatId !== undefined) this.blockedUntil.set(recorded.chatId, recorded.at + fault.blockMs);
    answer(fault.errcode, fault.errmsg ?? 'injected');
    return true;
  }

  private handle(
    cmd: string,
    reqId: string,
    body: Record<string, unknown>,
    recorded: RecordedFrame,
    answer: Answer,
  ): true {
    const chatId = this.chatOf(cmd, reqId, body);
    recorded.chatId = chatId;
    const isWrite = cmd === 'aibot_respond_msg' || cmd === 'aibot_send_msg';
    if (isWrite && chatId !== undefined && (this.blockedUntil.get(chatId) ?? 0) > recorded.at) this.rateLimitViolations.push({ chatId, at: recorded.at });
    if (cmd === 'aibot_respond_msg') return this.respond(reqId, body, recorded, answer);
    if (cmd === 'aibot_send_msg') return this.sendMessage(body, recorded, answer);
    if (cmd.startsWith('aibot_upload_media_')) return this.upload(cmd, body, answer);
    return answer(40004, 'unknown cmd');
  }

  private chatOf(cmd: string, reqId: string, body: Record<string, unknown>): string | undefined {
    if (cmd === 'aibot_respond_msg') return this.callbacks.get(reqId)?.chatId;
    if (cmd === 'aibot_send_msg') return typeof body.chatid === 'string' ? body.chatid : undefined;
    return undefined;
  }

  private respond(reqId: string, body: Record<string, unknown>, recorded: RecordedFrame, answer: Answer): true {
    const callback = this.callbacks.get(reqId);
    const stream = body.stream as { id?: unknown; finish?: unknown; content?: unknown } | undefined;
    if (!callback) return answer(846605, 'invalid req_id');
    if (body.msgtype !== 'stream' || !stream || typeof stream.id !== 'string' || typeof stream.content !== 'string') return answer(40058, 'invalid stream');
    if (this.isOversized(stream.content, recorded)) return answer(40058, 'content exceeds 20480 bytes');
    const existing = this.chats.find(stream.id);
    if (existing === undefined) {
      this.streamStartedAt.set(stream.id, recorded.at);
      this.chats.add({ id: stream.id, chatId: callback.chatId, kind: 'stream', text: stream.content, replyTo: callback.msgid, sentAt: recorded.at, isFinished: stream.finish === true });
      return answer(0);
    }
    const startedAt = this.streamStartedAt.get(stream.id) ?? Number.NEGATIVE_INFINITY;
    if (existing.isFinished || recorded.at - startedAt > this.streamLifetimeMs) return answer(846608, 'stream message update expired');
    if (existing.text !== stream.content) this.chats.edit(existing, stream.content, recorded.at);
    existing.isFinished = stream.finish === true;
    return answer(0);
  }

  private sendMessage(body: Record<string, unknown>, recorded: RecordedFrame, answer: Answer): true {
    const chatId = recorded.chatId;
    if (chatId === undefined || !this.knownChats.has(chatId)) return answer(40003, 'invalid chatid');
    if (body.msgtype === 'markdown') {
      const content = (body.markdown as { content?: unknown } | undefined)?.content;
      if (typeof content !== 'string') return answer(40058, 'invalid markdown');
      if (this.isOversized(content, recorded)) return answer(40058, 'content exceeds 20480 bytes');
      this.chats.add({ chatId, kind: 'markdown', text: content, sentAt: recorded.at, isFinished: true });
      return answer(0);
    }
    if (body.msgtype === 'image' || body.msgtype === 'file') {
      const mediaId = (body[body.msgtype] as { media_id?: unknown } | undefined)?.media_id;
      const upload = typeof mediaId === 'string' ? this.uploads.get(mediaId) : undefined;
      if (!upload || typeof mediaId !== 'string' || upload.type !== body.msgtype) return answer(40007, 'invalid media_id');
      this.chats.add({ chatId, kind: body.msgtype, text: '', sentAt: recorded.at, isFinished: true, mediaId, fileName: upload.filename });
      return answer(0);
    }
    return answer(40008, 'invalid msgtype');
  }

  private upload(cmd: string, body: Record<string, unknown>, answer: Answer): true {
    if (cmd === 'aibot_upload_media_init') {
      const totalChunks = Number(body.total_chunks);
      if (!(totalChunks >= 1 && totalChunks <= MAX_CHUNKS)) return answer(40058, 'too many chunks');
      const uploadId = `upload-${this.nextId++}`;
      this.uploadsInProgress.set(uploadId, {
        type: String(body.type),
        filename: String(body.filename),
        totalSize: Number(body.total_size),
        totalChunks,
        md5: String(body.md5),
        chunks: new Map(),
      });
      return answer(0, 'ok', { upload_id: uploadId });
    }
    const upload = this.uploadsInProgress.get(String(body.upload_id));
    if (!upload) return answer(40058, 'invalid upload_id');
    if (cmd === 'aibot_upload_media_chunk') {
      const bytes = Buffer.from(String(body.base64_data), 'base64');
      const index = Number(body.chunk_index);
      if (bytes.byteLength > MAX_CHUNK_BYTES || !(index >= 0 && index < upload.totalChunks)) return answer(40058, 'invalid chunk');
      upload.chunks.set(index, bytes);
      return answer(0);
    }
    if (cmd === 'aibot_upload_media_finish') {
      const parts = Array.from({ length: upload.totalChunks }, (_, i) => upload.chunks.get(i));
      if (parts.some((p) => p === undefined)) return answer(40058, 'missing chunks');
      const bytes = Buffer.concat(parts as Buffer[]);
      if (bytes.byteLength !== upload.totalSize || createHash('md5').update(bytes).digest('hex') !== upload.md5) return answer(40058, 'md5 mismatch');
      const mediaId = `media-${this.nextId++}`;
      this.uploads.set(mediaId, { type: upload.type, filename: upload.filename, bytes });
      this.uploadsInProgress.delete(String(body.upload_id));
      return answer(0, 'ok', { type: upload.type, media_id: mediaId, created_at: String(Date.now()) });
    }
    return answer(40004, 'unknown cmd');
  }

  private isOversized(content: string, recorded: RecordedFrame): boolean {
    if (Buffer.byteLength(content, 'utf8') <= MAX_CONTENT_BYTES) return false;
    this.oversized.push(recorded);
    return true;
  }

  private serveMedia(req: IncomingMessage, res: ServerResponse): void {
    const id = /^\/media\/([\w-]+)$/.exec(req.url ?? '')?.[1];
    const bytes = id === undefined ? undefined : this.media.get(id);
    const failure = this.downloadFailures.shift();
    const status = failure ?? (bytes ? 200 : 404);
    this.downloads.push({ status, at: Date.now() });
    this.notify();
    if (status !== 200 || !bytes) {
      res.writeHead(status).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.byteLength) }).end(bytes);
  }

  private notify(): void {
    this.waiters.notify();
  }
}
