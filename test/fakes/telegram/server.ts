import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Message, MessageEntity, Update, User, UserFromGetMe } from 'grammy/types';
import { Waiters } from '../waiters.js';
import { ApiFailure, type ChatMessageView, ChatStore, type ChatType, type MessageMedia } from './chats.js';
import { type DownloadRecord, type FakeFileInput, FileStore, type UploadRecord } from './files.js';
import { detectedEntities } from './typed-text.js';
import { UpdateQueue } from './updates.js';
import { readParams } from './wire.js';

/**
 * A fake Telegram Bot API on 127.0.0.1 speaking the real wire format: `POST
 * /bot<token>/<method>` with a JSON, urlencoded or multipart body, answered with
 * `{ok:true,result}` or `{ok:false,error_code,description,parameters?}` and the same HTTP status.
 * getUpdates really long-polls. Every call is recorded; chats keep what users see. Files users
 * send are served by getFile and `GET /file/bot<token>/<file_path>`; files the bot sends are
 * kept as uploads.
 */

/** One API call as it arrived. */
export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  /** Arrival time, ms since the epoch. */
  at: number;
  /** Set once answered. */
  response?: { ok: true } | { ok: false; errorCode: number; description: string };
}

/** An injected failure (see {@link FakeTelegram.failNext}). */
export type Fault =
  | { errorCode: 429; retryAfter: number }
  | { errorCode: 500 }
  | { errorCode: 401 }
  | { errorCode: 400 | 403; description: string }
  /** No answer: the connection is reset, as when Telegram cannot be reached. */
  | { errorCode: 'unreachable' };

/** What `failure` returns for an `unreachable` fault: the request's socket is destroyed. */
const CONNECTION_RESET = Symbol('connection reset');

/** A send or edit to a chat that arrived while a 429's `retry_after` for that chat was running. */
export interface RateLimitViolation {
  method: string;
  chatId: number;
  at: number;
  blockedUntil: number;
}

export interface UserMessageInput {
  chatId: number;
  chatType: ChatType;
  text?: string;
  caption?: string;
  /**
   * Formatting the sender's app applied (bold, a labelled link, a `text_mention` of someone
   * without a username), in UTF-16 offsets. Mentions, commands and URLs are found by the fake itself.
   */
  entities?: MessageEntity[];
  /** Default: a user whose id is the chat id in private chats, else 1001. */
  from?: Partial<User>;
  replyToMessageId?: number;
  isBot?: boolean;
  /** A photo, as the sizes Telegram offers (it lists thumbnails first). */
  photo?: FakePhotoSizeInput[];
  document?: FakeDocumentInput;
}

export interface FakePhotoSizeInput extends FakeFileInput {
  width: number;
  height: number;
}

export interface FakeDocumentInput extends FakeFileInput {
  /** `file_name`; absent = Telegram gave none. */
  fileName?: string;
  /** `mime_type`; absent = Telegram gave none. */
  mimeType?: string;
}

export interface FakeTelegramOptions {
  token?: string;
  botInfo?: Partial<UserFromGetMe>;
  /** Answer every call with 401 Unauthorized, as for a revoked token. */
  rejectToken?: boolean;
  /**
   * Flood control of groups as Telegram words it ("not more than 20 messages per minute to the
   * same group"): past `perWindow` messages and edits to one group (negative chat id) in any
   * `windowMs`, answer 429 with the seconds until one leaves the window, and count it in
   * `groupFloods`. Absent: groups are not limited.
   */
  groupLimit?: { perWindow: number; windowMs: number };
}

/** What the fake limits per group when `groupLimit` is set. */
const GROUP_LIMITED_METHODS = new Set(['sendMessage', 'editMessageText', 'sendPhoto', 'sendDocument']);

/** Methods that put something in front of a chat's members (subject to per-chat flood control). */
const CHAT_OUTPUT_METHODS = new Set([
  'sendMessage',
  'editMessageText',
  'sendChatAction',
  'deleteMessage',
  'sendPhoto',
  'sendDocument',
]);
/** Stands in for the photo of a caption-only user message when the test gives none. */
const DEFAULT_PHOTO: FakePhotoSizeInput = { bytes: new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), width: 90, height: 90 };

type Handler = (params: Record<string, unknown>, res: ServerResponse, at: number) => unknown;

export class FakeTelegram {
  readonly token: string;
  readonly botInfo: UserFromGetMe;
  /** When true, every call is answered 401 Unauthorized. */
  rejectToken: boolean;
  /** Sends and edits that ignored a running `retry_after`; tests expect this to stay empty. */
  readonly rateLimitViolations: RateLimitViolation[] = [];
  /** Commands stored by setMyCommands. */
  commands: unknown[] = [];
  /** Calls answered 429 by `groupLimit`: the server sent faster than the group allows. */
  readonly groupFloods: { method: string; chatId: number; at: number }[] = [];
  private readonly groupLimit: FakeTelegramOptions['groupLimit'];
  private readonly groupSends = new Map<number, number[]>();

  private readonly recorded: RecordedCall[] = [];
  private readonly store: ChatStore;
  private readonly files = new FileStore();
  private readonly faults = new Map<string, { fault: Fault; remaining: number }[]>();
  private readonly blockedUntil = new Map<number, number>();
  private readonly waiters = new Waiters('FakeTelegram');
  private readonly updates = new UpdateQueue();
  private server: Server | undefined;
  private port = 0;
  private readonly handlers: Record<string, Handler> = {
    getMe: () => this.botInfo,
    deleteWebhook: (params) => {
      if (params.drop_pending_updates === true) this.updates.clear();
      return true;
    },
    getUpdates: (params, res) => this.updates.getUpdates(params, res),
    sendMessage: (params, _res, at) => this.store.sendBotMessage(params, at),
    editMessageText: (params, _res, at) => this.store.editBotMessage(params, at),
    sendChatAction: (params) => {
      this.store.chat(params.chat_id);
      if (typeof params.action !== 'string') throw new ApiFailure(400, 'Bad Request: wrong parameter action in request');
      return true;
    },
    deleteMessage: (params) => this.store.deleteMessage(params),
    getFile: (params) => this.files.getFile(params),
    sendPhoto: (params, _res, at) => this.receiveUpload('sendPhoto', params, at),
    sendDocument: (params, _res, at) => this.receiveUpload('sendDocument', params, at),
    setMyCommands: (params) => {
      this.commands = Array.isArray(params.commands) ? params.commands : [];
      return true;
    },
  };

  constructor(options: FakeTelegramOptions = {}) {
    this.token = options.token ?? '123456:TEST-fake-token';
    this.rejectToken = options.rejectToken ?? false;
    this.groupLimit = options.groupLimit;
    this.botInfo = {
      id: Number(this.token.split(':')[0]) || 123456,
      is_bot: true,
      first_name: 'Test Bot',
      username: 'test_bot',
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
      ...options.botInfo,
    };
    this.store = new ChatStore(this.botInfo);
  }

  /** `http://127.0.0.1:<port>`, no trailing slash; valid after `start()`. */
  get apiRoot(): string {
    if (!this.server) throw new Error('FakeTelegram is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every call so far, in arrival order. */
  get calls(): readonly RecordedCall[] {
    return this.recorded;
  }

  callsTo(method: string): RecordedCall[] {
    return this.recorded.filter((call) => call.method === method);
  }

  /** Files the bot sent with sendPhoto / sendDocument, in arrival order. */
  get uploads(): readonly UploadRecord[] {
    return this.files.uploads;
  }

  /** Every GET of a file download URL, with the status it got. */
  get downloads(): readonly DownloadRecord[] {
    return this.files.downloads;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.answer(res, new ApiFailure(500, `Internal Server Error: ${String(error)}`));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Answers a held getUpdates with `[]` and closes every connection. */
  async stop(): Promise<void> {
    this.updates.release();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /**
   * A person writes in a chat: the update is queued for getUpdates. Returns the message. With
   * `photo` or `document` the text goes in the caption; a caption alone comes with a small photo.
   */
  sendUserMessage(input: UserMessageInput): Message {
    const media = this.mediaOf(input);
    const isCaption = media !== undefined;
    const defaultId = input.chatType === 'private' ? input.chatId : 1001;
    const from: User = {
      id: defaultId,
      is_bot: input.isBot ?? false,
      first_name: 'Alice',
      username: 'alice',
      ...input.from,
    };
    const text = input.text ?? input.caption ?? '';
    const message = this.store.addUserMessage({
      chatId: input.chatId,
      chatType: input.chatType,
      from,
      text,
      entities: [...detectedEntities(text), ...(input.entities ?? [])].sort((a, b) => a.offset - b.offset),
      isCaption,
      ...(media === undefined ? {} : { media }),
      replyToMessageId: input.replyToMessageId,
      at: Date.now(),
    });
    this.pushUpdate({ message } as Omit<Update, 'update_id'>);
    return message;
  }

  /** A person sends a photo (in the sizes given), with an optional caption. */
  sendUserPhoto(input: Omit<UserMessageInput, 'text' | 'photo' | 'document'> & { photo: FakePhotoSizeInput[] }): Message {
    return this.sendUserMessage(input);
  }

  /** A person sends a document, with an optional caption. */
  sendUserDocument(input: Omit<UserMessageInput, 'text' | 'photo' | 'document'> & { document: FakeDocumentInput }): Message {
    return this.sendUserMessage(input);
  }

  private mediaOf(input: UserMessageInput): MessageMedia | undefined {
    if (input.document !== undefined) return { document: this.files.document(input.document) };
    if (input.photo !== undefined) return { photo: input.photo.map((size) => this.files.photoSize(size)) };
    if (input.text === undefined && input.caption !== undefined) return { photo: [this.files.photoSize(DEFAULT_PHOTO)] };
    return undefined;
  }

  /** sendPhoto / sendDocument: checks the upload like Telegram, records it, posts the message. */
  private receiveUpload(method: UploadRecord['method'], params: Record<string, unknown>, at: number): Message {
    this.store.chat(params.chat_id);
    const field = method === 'sendPhoto' ? 'photo' : 'document';
    const upload = this.files.takeUpload(params, field);
    const media: MessageMedia =
      field === 'photo'
        ? // Dimensions are not decoded from the bytes.
          { photo: [this.files.photoSize({ bytes: upload.bytes, width: 90, height: 90 })] }
        : { document: this.files.document({ bytes: upload.bytes, fileName: upload.fileName }) };
    const message = this.store.sendBotMedia(params, media, at);
    const replyTo = (params.reply_parameters as { message_id?: unknown } | undefined)?.message_id;
    this.files.uploads.push({
      method,
      chatId: Number(params.chat_id),
      fileName: upload.fileName,
      bytes: upload.bytes,
      ...(typeof replyTo === 'number' ? { replyTo } : {}),
      at,
    });
    return message;
  }

  /** Queues a raw update (any type) for getUpdates. */
  pushUpdate(update: Omit<Update, 'update_id'>): Update {
    const full = this.updates.push(update);
    this.emit();
    return full;
  }

  /** How many updates the bot has not confirmed yet: Telegram would send them again to the next poller. */
  unconfirmedUpdates(): number {
    return this.updates.unconfirmed;
  }

  /** What the chat shows: bot and user messages with current text, reply target and edits. */
  chatMessages(chatId: number): ChatMessageView[] {
    return this.store.view(chatId);
  }

  /** The bot's messages in a chat that are still there. */
  botMessages(chatId: number): ChatMessageView[] {
    return this.chatMessages(chatId).filter((m) => m.from === 'bot' && !m.isDeleted);
  }

  /** Answers the next `times` calls of `method` with `fault` instead of handling them. */
  failNext(method: string, fault: Fault, times = 1): void {
    const queue = this.faults.get(method) ?? [];
    queue.push({ fault, remaining: times });
    this.faults.set(method, queue);
  }

  /** Drops the faults still queued for `method` (for every method when absent): the platform recovered. */
  clearFaults(method?: string): void {
    if (method === undefined) this.faults.clear();
    else this.faults.delete(method);
  }

  /**
   * Resolves with the predicate's first truthy value, checked now and after every call and
   * update; rejects after `timeoutMs`.
   */
  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  private emit(): void {
    this.waiters.notify();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && download) {
      this.serveDownload(download[1] ?? '', download[2] ?? '', res);
      return;
    }
    const params = await readParams(req, url);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const call: RecordedCall = { method: match?.[2] ?? url.pathname, params, at: Date.now() };
    this.recorded.push(call);
    this.emit();
    const result = await this.dispatch(match?.[1], call, res);
    this.answer(res, result, call);
  }

  /** `GET /file/bot<token>/<file_path>` (https://core.telegram.org/bots/api#file). */
  private serveDownload(token: string, encodedPath: string, res: ServerResponse): void {
    if (this.rejectToken || token !== this.token) {
      this.answer(res, new ApiFailure(this.rejectToken ? 401 : 404, this.rejectToken ? 'Unauthorized' : 'Not Found'));
      return;
    }
    this.files.serve(encodedPath.split('/').map(decodeURIComponent).join('/'), res);
    this.emit();
  }

  private async dispatch(token: string | undefined, call: RecordedCall, res: ServerResponse): Promise<unknown> {
    const handler = this.handlers[call.method];
    if (token === undefined || !handler) return new ApiFailure(404, 'Not Found');
    if (this.rejectToken || token !== this.token) return new ApiFailure(401, 'Unauthorized');
    const chatId = typeof call.params.chat_id === 'number' ? call.params.chat_id : undefined;
    if (chatId !== undefined && CHAT_OUTPUT_METHODS.has(call.method)) this.checkFloodWindow(call, chatId);
    const fault = this.takeFault(call.method) ?? this.groupFlood(call, chatId);
    if (fault) return this.failure(fault, call, chatId);
    try {
      return await handler(call.params, res, call.at);
    } catch (error) {
      if (error instanceof ApiFailure) return error;
      throw error;
    }
  }

  /** A 429 for a send to a group past `groupLimit`, or undefined when it may go (and is counted). */
  private groupFlood(call: RecordedCall, chatId: number | undefined): Fault | undefined {
    const limit = this.groupLimit;
    if (limit === undefined || chatId === undefined || chatId >= 0 || !GROUP_LIMITED_METHODS.has(call.method)) return undefined;
    const recent = (this.groupSends.get(chatId) ?? []).filter((at) => at > call.at - limit.windowMs);
    this.groupSends.set(chatId, recent);
    if (recent.length < limit.perWindow) {
      recent.push(call.at);
      return undefined;
    }
    this.groupFloods.push({ method: call.method, chatId, at: call.at });
    return { errorCode: 429, retryAfter: Math.max(1, Math.ceil(((recent[0] as number) + limit.windowMs - call.at) / 1000)) };
  }

  private checkFloodWindow(call: RecordedCall, chatId: number): void {
    const until = this.blockedUntil.get(chatId);
    if (until !== undefined && call.at < until) {
      this.rateLimitViolations.push({ method: call.method, chatId, at: call.at, blockedUntil: until });
    }
  }

  private takeFault(method: string): Fault | undefined {
    const queue = this.faults.get(method);
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    head.remaining -= 1;
    if (head.remaining <= 0) queue.shift();
    return head.fault;
  }

  private failure(fault: Fault, call: RecordedCall, chatId: number | undefined): ApiFailure | typeof CONNECTION_RESET {
    switch (fault.errorCode) {
      case 'unreachable':
        return CONNECTION_RESET;
      case 429: {
        if (chatId !== undefined) {
          const until = call.at + fault.retryAfter * 1000;
          this.blockedUntil.set(chatId, Math.max(until, this.blockedUntil.get(chatId) ?? 0));
        }
        return new ApiFailure(429, `Too Many Requests: retry after ${fault.retryAfter}`, fault.retryAfter);
      }
      case 500:
        return new ApiFailure(500, 'Internal Server Error');
      case 401:
        return new ApiFailure(401, 'Unauthorized');
      default:
        return new ApiFailure(fault.errorCode, fault.description);
    }
  }

  private answer(res: ServerResponse, result: unknown, call?: RecordedCall): void {
    if (res.writableEnded || res.destroyed) return;
    if (result === CONNECTION_RESET) {
      res.destroy();
      this.emit();
      return;
    }
    const isFailure = result instanceof ApiFailure;
    const body = isFailure
      ? {
          ok: false,
          error_code: result.errorCode,
          description: result.description,
          ...(result.retryAfterSeconds === undefined ? {} : { parameters: { retry_after: result.retryAfterSeconds } }),
        }
      : { ok: true, result };
    if (call) {
      call.response = isFailure
        ? { ok: false, errorCode: result.errorCode, description: result.description }
        : { ok: true };
    }
    res.writeHead(isFailure ? result.errorCode : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    this.emit();
  }
}
