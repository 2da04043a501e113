import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { Waiters } from '../waiters.js';
import { composedText } from './composer.js';
import { FakeFileStore } from './files.js';
import { type ChannelType, MessageStore, SlackApiFailure, type SlackMessageView } from './messages.js';
import { bearer, parseParams, readBody } from './wire.js';

/**
 * A fake Slack on 127.0.0.1 speaking the real wire formats:
 * - Web API: `POST /api/<method>` with a urlencoded or JSON body and a Bearer token, answered
 *   `{ok:true,...}` or `{ok:false,error}` (HTTP 200), or HTTP 429 with `Retry-After` seconds.
 * - Socket Mode: `apps.connections.open` hands out `ws://…/link/?ticket=…`; the socket says
 *   `hello`, carries `events_api` envelopes and records their acks; unacknowledged envelopes are
 *   redelivered (with `retry_attempt`) on the next connection, as Slack retries.
 * - HTTP Events: the same envelopes' payloads POSTed to `eventsUrl`, signed with v0 signatures.
 * - Files: uploads through `files.getUploadURLExternal` + POST + `files.completeUploadExternal`;
 *   users' files served at `url_private_download` only with the bot token.
 * Every Web API call is recorded; the workspace keeps what people see.
 */

export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  /** Arrival time, ms since the epoch. */
  at: number;
  token: string | undefined;
  response?: { ok: true } | { ok: false; error: string; status: number };
}

/** An injected failure for the next call(s) of one method. */
export type Fault = { kind: 'rate-limit'; retryAfterSeconds: number } | { kind: 'error'; error: string } | { kind: 'http'; status: number };

export interface RateLimitViolation {
  method: string;
  channel: string;
  at: number;
  blockedUntil: number;
}

export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  /** Answer every call with `invalid_auth`, as for a revoked token. */
  rejectToken?: boolean;
  /** Ping each socket this often, in ms (Slack pings; the client reconnects after 30 s without). Default 10000. */
  pingIntervalMs?: number;
  /**
   * Slack's retries of an event it got no acknowledgement for (a non-2xx answer, no envelope ack):
   * the n-th retry goes out this long after the delivery before it, with retry number n (Slack:
   * three, after ~0 s, 1 min, 5 min). Default none: only a new socket connection redelivers.
   */
  retryDelaysMs?: readonly number[];
}

export interface UserMessageInput {
  channel: string;
  channelType: ChannelType;
  user: string;
  /**
   * What the person typed; the event carries it as Slack's client encodes it (`composer.ts`):
   * `&`, `<`, `>` as entities, URLs linked, picked mentions and links in Slack's markup as written.
   */
  text: string;
  /** Posts into the thread of this ts. */
  threadTs?: string;
  /** `app_mention` (a mention in a channel) or `message`. Default `message`. */
  eventType?: 'message' | 'app_mention';
  /** Sent by a bot: `bot_id` is set and, unless it is ours, `subtype: bot_message`. */
  botId?: string;
  files?: { name: string; mimetype: string; bytes: Uint8Array }[];
}

export interface Delivered {
  channel: string;
  ts: string;
  eventId: string;
  envelopeId: string;
}

interface Envelope {
  envelopeId: string;
  payload: Record<string, unknown>;
  retryAttempt: number;
  isAcked: boolean;
}

const TEAM_ID = 'T0FAKE';
const APP_ID = 'A0FAKE';
/** Web API methods that show something in a channel (counted for rate-limit violations). */
const CHANNEL_OUTPUT_METHODS = new Set(['chat.postMessage', 'chat.update', 'chat.startStream', 'chat.appendStream', 'chat.stopStream']);

export class FakeSlack {
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly teamId = TEAM_ID;
  readonly botUserId = 'U0BOT';
  readonly botId = 'B0BOT';
  rejectToken: boolean;
  /** `undefined`: chat.*Stream work; else every stream call answers this error (`not_allowed`, `unknown_method`). */
  streamingError: string | undefined;
  /** Where HTTP Events are POSTed; `undefined` = Socket Mode only. */
  eventsUrl: string | undefined;
  readonly rateLimitViolations: RateLimitViolation[] = [];
  /** Acks received over sockets, by envelope id. */
  readonly acks: { envelopeId: string; at: number }[] = [];
  /** Envelopes pushed over sockets, retries included, in order. */
  readonly pushes: { envelopeId: string; retryAttempt: number; at: number }[] = [];
  /** Answers to HTTP event deliveries. */
  readonly eventResponses: { eventId: string; status: number; body: string; retryNum: number }[] = [];
  /** Socket connections opened so far. */
  connectionsOpened = 0;
  /** Members `users.info` knows, by id. */
  readonly users = new Map<string, { name: string; displayName: string; realName: string }>();
  /** Channel names `conversations.info` knows, by id. */
  readonly channelNames = new Map<string, string>();

  private readonly recorded: RecordedCall[] = [];
  private readonly store: MessageStore;
  private readonly faults = new Map<string, Fault[]>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly waiters = new Waiters('FakeSlack');
  private readonly envelopes: Envelope[] = [];
  private readonly sockets = new Set<WebSocket>();
  private readonly files: FakeFileStore;
  private readonly wss = new WebSocketServer({ noServer: true });
  private server: Server | undefined;
  private pinger: ReturnType<typeof setInterval> | undefined;
  private port = 0;
  private nextId = 1;
  private readonly retryTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly options: FakeSlackOptions = {}) {
    this.botToken = options.botToken ?? 'xoxb-fake-bot-token';
    this.appToken = options.appToken ?? 'xapp-fake-app-token';
    this.signingSecret = options.signingSecret ?? 'fake-signing-secret';
    this.rejectToken = options.rejectToken ?? false;
    this.store = new MessageStore(this.botUserId, this.botId, (id) => {
      const user = this.users.get(id);
      return user && (user.displayName || user.realName || user.name);
    });
    this.files = new FakeFileStore(() => `http://127.0.0.1:${this.port}`, TEAM_ID, this.botToken);
  }

  /** Web API root, as `api_url` / `clientOptions.slackApiUrl` takes it. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get calls(): readonly RecordedCall[] {
    return this.recorded;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
    });
    server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.pinger = setInterval(() => {
      for (const socket of this.sockets) socket.ping();
    }, this.options.pingIntervalMs ?? 10_000);
  }

  async stop(): Promise<void> {
    clearInterval(this.pinger);
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    for (const socket of this.sockets) socket.terminate();
    this.sockets.clear();
    this.wss.close();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The next `count` calls of `method` fail with `fault`. */
  failNext(method: string, fault: Fault, count = 1): void {
    const queue = this.faults.get(method) ?? [];
    for (let i = 0; i < count; i++) queue.push(fault);
    this.faults.set(method, queue);
  }

  /** Messages in a channel, top level and in threads, in posting order (deleted ones left out). */
  messages(channel: string): SlackMessageView[] {
    return this.store.view(channel);
  }

  botMessages(channel: string): SlackMessageView[] {
    return this.messages(channel).filter((m) => m.from === 'bot');
  }

  /** Bytes of a file the bot uploaded. */
  uploadedFile(id: string): Uint8Array | undefined {
    return this.files.bytes(id);
  }

  /** Number of sockets open now. */
  get openSockets(): number {
    return this.sockets.size;
  }

  /**
   * A person (or bot) writes: the message is stored and its event delivered over Socket Mode (to
   * one open socket; queued until one connects) or to `eventsUrl` when set.
   */
  async sendUserMessage(input: UserMessageInput): Promise<Delivered> {
    const at = Date.now();
    this.store.ensureChannel(input.channel, input.channelType);
    const files = (input.files ?? []).map((file) => this.files.addUserFile(file));
    const text = composedText(input.text);
    const ts = this.store.addUserMessage({
      channel: input.channel,
      user: input.user,
      ...(input.botId === undefined ? {} : { botId: input.botId }),
      text,
      ...(input.threadTs === undefined ? {} : { threadTs: input.threadTs }),
      at,
      files,
    });
    const event: Record<string, unknown> = {
      type: input.eventType ?? 'message',
      user: input.user,
      text,
      ts,
      channel: input.channel,
      event_ts: ts,
      channel_type: input.channelType,
      team: TEAM_ID,
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
      ...(input.botId === undefined ? {} : { bot_id: input.botId }),
      ...(input.botId !== undefined && input.botId !== this.botId ? { subtype: 'bot_message' } : {}),
      ...(files.length === 0 ? {} : { subtype: 'file_share', files: files.map((file) => this.files.fileObject(file)) }),
    };
    return this.deliverEvent(event);
  }

  /** Delivers an arbitrary event (e.g. a `message_changed`), wrapped as Slack wraps it. */
  async deliverEvent(event: Record<string, unknown>): Promise<Delivered> {
    return this.deliverPayload({ event });
  }

  /**
   * Delivers an `event_callback` payload whose fields are Slack's defaults overridden by
   * `overrides` (an `undefined` value removes the field): for malformed, signed events.
   */
  async deliverPayload(overrides: Record<string, unknown>): Promise<Delivered> {
    const eventId = `Ev${String(this.nextId++).padStart(8, '0')}`;
    const payload: Record<string, unknown> = {
      token: 'legacy-verification-token',
      team_id: TEAM_ID,
      api_app_id: APP_ID,
      type: 'event_callback',
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ team_id: TEAM_ID, user_id: this.botUserId, is_bot: true, is_enterprise_install: false }],
    };
    for (const [key, value] of Object.entries(overrides)) {
      if (value === undefined) delete payload[key];
      else payload[key] = value;
    }
    const event = (typeof payload.event === 'object' && payload.event !== null ? payload.event : {}) as Record<string, unknown>;
    const envelope: Envelope = { envelopeId: `env-${eventId}`, payload, retryAttempt: 0, isAcked: false };
    if (this.eventsUrl === undefined) {
      this.envelopes.push(envelope);
      this.pushEnvelope(envelope);
    } else {
      await this.postWithRetries(payload, 0);
    }
    return { channel: String(event.channel), ts: String(event.ts), eventId, envelopeId: envelope.envelopeId };
  }

  /** POSTs an event; a non-2xx answer (or none) is retried after `retryDelaysMs`, as Slack does. */
  private async postWithRetries(payload: Record<string, unknown>, retryNum: number): Promise<void> {
    const status = await this.postEvent(payload, retryNum).then(
      (response) => response.status,
      () => 0,
    );
    const delay = this.options.retryDelaysMs?.[retryNum];
    if ((status >= 200 && status < 300) || delay === undefined) return;
    this.afterRetryDelay(delay, () => void this.postWithRetries(payload, retryNum + 1));
  }

  private afterRetryDelay(delayMs: number, retry: () => void): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      retry();
    }, delayMs);
    this.retryTimers.add(timer);
  }

  /** Signs `body` as Slack does: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>`. */
  sign(body: string, timestampSeconds: number, secret = this.signingSecret): string {
    return `v0=${createHmac('sha256', secret).update(`v0:${timestampSeconds}:${body}`).digest('hex')}`;
  }

  /**
   * POSTs an Events API payload to `eventsUrl`, signed (unless `signature` overrides it), with
   * `X-Slack-Retry-Num` when `retryNum > 0`. Resolves with the answer.
   */
  async postEvent(
    payload: Record<string, unknown>,
    retryNum: number,
    overrides: { timestampSeconds?: number; signature?: string | null } = {},
  ): Promise<{ status: number; body: string }> {
    if (this.eventsUrl === undefined) throw new Error('FakeSlack.postEvent: eventsUrl is not set');
    const body = JSON.stringify(payload);
    const timestamp = overrides.timestampSeconds ?? Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp) };
    const signature = overrides.signature === undefined ? this.sign(body, timestamp) : overrides.signature;
    if (signature !== null) headers['x-slack-signature'] = signature;
    if (retryNum > 0) {
      headers['x-slack-retry-num'] = String(retryNum);
      headers['x-slack-retry-reason'] = 'http_timeout';
    }
    const response = await fetch(this.eventsUrl, { method: 'POST', headers, body });
    const text = await response.text();
    this.eventResponses.push({ eventId: String(payload.event_id ?? ''), status: response.status, body: text, retryNum });
    this.emit();
    return { status: response.status, body: text };
  }

  /** Asks every socket to reconnect (`disconnect` / `refresh_requested`), as Slack does regularly. */
  requestRefresh(): void {
    for (const socket of this.sockets) socket.send(JSON.stringify({ type: 'disconnect', reason: 'refresh_requested', debug_info: { host: 'fake' } }));
  }

  /** Drops every socket without a close handshake, as a network failure does. */
  dropSockets(): void {
    for (const socket of this.sockets) socket.terminate();
  }

  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  private emit(): void {
    this.waiters.notify();
  }

  private pushEnvelope(envelope: Envelope): void {
    // Slack sends each event to one of the app's connections.
    const socket = [...this.sockets].at(-1);
    if (!socket) return;
    this.pushes.push({ envelopeId: envelope.envelopeId, retryAttempt: envelope.retryAttempt, at: Date.now() });
    const delay = this.options.retryDelaysMs?.[envelope.retryAttempt];
    if (delay !== undefined) {
      const attempt = envelope.retryAttempt;
      this.afterRetryDelay(delay, () => {
        if (envelope.isAcked || envelope.retryAttempt !== attempt) return;
        envelope.retryAttempt += 1;
        this.pushEnvelope(envelope);
      });
    }
    socket.send(
      JSON.stringify({
        envelope_id: envelope.envelopeId,
        type: 'events_api',
        accepts_response_payload: false,
        retry_attempt: envelope.retryAttempt,
        retry_reason: envelope.retryAttempt === 0 ? '' : 'timeout',
        payload: envelope.payload,
      }),
    );
    this.emit();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/link/') {
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      this.connectionsOpened += 1;
      ws.on('message', (data) => this.onSocketMessage(data.toString()));
      ws.on('close', () => {
        this.sockets.delete(ws);
        this.emit();
      });
      ws.send(JSON.stringify({ type: 'hello', num_connections: this.sockets.size, debug_info: { host: 'fake' }, connection_info: { app_id: APP_ID } }));
      // Slack retries what was never acknowledged.
      for (const envelope of this.envelopes.filter((e) => !e.isAcked)) {
        envelope.retryAttempt += 1;
        this.pushEnvelope(envelope);
      }
      this.emit();
    });
  }

  private onSocketMessage(data: string): void {
    let message: { envelope_id?: unknown };
    try {
      message = JSON.parse(data) as { envelope_id?: unknown };
    } catch {
      return;
    }
    const envelope = this.envelopes.find((e) => e.envelopeId === message.envelope_id);
    if (!envelope) return;
    envelope.isAcked = true;
    this.acks.push({ envelopeId: envelope.envelopeId, at: Date.now() });
    this.emit();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(req);
    const upload = /^\/upload\/(F\w+)$/.exec(url.pathname);
    if (req.method === 'POST' && upload) {
      await this.files.receiveUpload(upload[1] ?? '', body, req, res);
      return;
    }
    const download = /^\/files-pri\/\w+-(F\w+)\//.exec(url.pathname);
    if (req.method === 'GET' && download) {
      this.files.serveFile(download[1] ?? '', req, res);
      return;
    }
    const api = /^\/api\/([\w.]+)$/.exec(url.pathname);
    if (req.method !== 'POST' || !api) return void res.writeHead(404).end('not found');
    const method = api[1] ?? '';
    const params = parseParams(body, req.headers['content-type']);
    const token = bearer(req) ?? (typeof params.token === 'string' ? params.token : undefined);
    const at = Date.now();
    const call: RecordedCall = { method, params, at, token };
    this.recorded.push(call);
    try {
      const result = this.answer(method, params, token, at);
      call.response = { ok: true };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, ...result }));
    } catch (error) {
      if (!(error instanceof SlackApiFailure)) throw error;
      call.response = { ok: false, error: error.error, status: error.status };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
      res.writeHead(error.status, headers).end(JSON.stringify({ ok: false, error: error.error }));
    }
    this.emit();
  }

  private answer(method: string, params: Record<string, unknown>, token: string | undefined, at: number): Record<string, unknown> {
    const fault = this.faults.get(method)?.shift();
    if (fault) this.throwFault(fault, method, params, at);
    const isAppMethod = method === 'apps.connections.open';
    if (this.rejectToken || token !== (isAppMethod ? this.appToken : this.botToken)) throw new SlackApiFailure('invalid_auth');
    this.checkViolation(method, params, at);
    return this.dispatch(method, params, at);
  }

  private dispatch(method: string, params: Record<string, unknown>, at: number): Record<string, unknown> {
    const store = this.store;
    if (method.startsWith('chat.') && method.endsWith('Stream') && this.streamingError !== undefined) {
      throw new SlackApiFailure(this.streamingError);
    }
    switch (method) {
      case 'auth.test':
        return { url: 'https://fake.slack.com/', team: 'Fake Team', user: 'deerflow', team_id: TEAM_ID, user_id: this.botUserId, bot_id: this.botId };
      case 'apps.connections.open':
        return { url: `ws://127.0.0.1:${this.port}/link/?ticket=t${this.nextId++}&app_id=${APP_ID}` };
      case 'chat.postMessage': {
        const posted = store.postBotMessage(params, at);
        return { channel: params.channel, ts: posted.ts, message: { text: posted.text, user: this.botUserId, bot_id: this.botId, ts: posted.ts } };
      }
      case 'chat.update': {
        const updated = store.updateBotMessage(params, at);
        return { channel: params.channel, ts: updated.ts, text: updated.text };
      }
      case 'chat.delete':
        store.deleteBotMessage(params);
        return { channel: params.channel, ts: params.ts };
      case 'chat.startStream':
        return { channel: params.channel, ts: store.startStream(params, at) };
      case 'chat.appendStream':
        return { channel: params.channel, ts: store.appendStream(params, at) };
      case 'chat.stopStream':
        return { channel: params.channel, ts: store.stopStream(params, at), message: {} };
      case 'users.info': {
        const id = String(params.user ?? '');
        const user = this.users.get(id);
        if (!user) throw new SlackApiFailure('user_not_found');
        return {
          user: { id, team_id: TEAM_ID, name: user.name, real_name: user.realName, profile: { display_name: user.displayName, real_name: user.realName } },
        };
      }
      case 'conversations.info': {
        const id = String(params.channel ?? '');
        const name = this.channelNames.get(id);
        if (name === undefined) throw new SlackApiFailure('channel_not_found');
        return { channel: { id, name, is_channel: true } };
      }
      case 'reactions.add':
        store.addReaction(params);
        return {};
      case 'files.getUploadURLExternal':
        return this.files.reserveUpload(params);
      case 'files.completeUploadExternal': {
        const files = this.files.completeUpload(params);
        if (typeof params.channel_id === 'string') {
          const text = typeof params.initial_comment === 'string' ? params.initial_comment : '';
          this.store.shareBotFiles({ channel: params.channel_id, threadTs: params.thread_ts, text, files, at });
        }
        return { files: files.map((f) => ({ id: f.id, title: f.name })) };
      }
      default:
        throw new SlackApiFailure('unknown_method', 404);
    }
  }

  private throwFault(fault: Fault, method: string, params: Record<string, unknown>, at: number): never {
    if (fault.kind === 'rate-limit') {
      const key = `${method}:${String(params.channel ?? '')}`;
      this.blockedUntil.set(key, at + fault.retryAfterSeconds * 1000);
      throw new SlackApiFailure('ratelimited', 429, fault.retryAfterSeconds);
    }
    if (fault.kind === 'http') throw new SlackApiFailure('fatal_error', fault.status);
    throw new SlackApiFailure(fault.error);
  }

  /** A call to a channel while a Retry-After for it runs is a violation (tests expect none). */
  private checkViolation(method: string, params: Record<string, unknown>, at: number): void {
    if (!CHANNEL_OUTPUT_METHODS.has(method)) return;
    const channel = String(params.channel ?? '');
    for (const [key, until] of this.blockedUntil) {
      if (key.endsWith(`:${channel}`) && at < until) {
        this.rateLimitViolations.push({ method, channel, at, blockedUntil: until });
      }
    }
  }
}

export type { ChannelType, SlackMessageView } from './messages.js';
