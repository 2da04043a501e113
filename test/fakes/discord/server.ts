import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Waiters } from '../waiters.js';
import { type DiscordDisplay, displayOf, pingsOf } from './display.js';
import { FakeGateway } from './gateway.js';
import {
  CHANNEL_TYPES,
  channelPayload,
  DiscordApiFailure,
  DiscordStore,
  type FakeChannel,
  type FakeUser,
  messagePayload,
  SnowflakeMaker,
  type StoredAttachment,
  type StoredMessage,
  userPayload,
} from './store.js';
import { type ParsedBody, parseBody, type RouteName, readBody, routeOf } from './wire.js';

export type { RouteName } from './wire.js';

/**
 * A fake Discord on 127.0.0.1 for the real discord.js: REST under `/api/v10` (point
 * `rest.api` at {@link FakeDiscord.apiRoot}) and the gateway websocket whose URL `gateway/bot`
 * hands out. Every REST call is recorded with its arrival time; the chat keeps what people see
 * (messages with their edits, reactions, typing, threads, files). Faults: 429 with Discord's
 * body and bucket headers, other error answers, a dropped socket, an invalid session.
 */

export interface RecordedCall {
  route: RouteName;
  method: string;
  path: string;
  channelId?: string;
  /** JSON body (multipart: its `payload_json`). */
  body?: unknown;
  at: number;
  status?: number;
}

/** An injected answer for the next call(s) of a route. */
export type Fault =
  | { status: 429; retryAfterMs: number; isGlobal?: boolean }
  /** `isApplied`: the call takes effect, then the answer is this error (a response lost on the way back). */
  | { status: number; code: number; message: string; isApplied?: boolean };

export interface RateLimitViolation {
  route: RouteName;
  channelId: string;
  at: number;
  blockedUntil: number;
}

export interface UserMessageInput {
  /** A guild channel or thread id; absent = the DM channel of `author`. */
  channelId?: string;
  author: FakeUser;
  content: string;
  replyToMessageId?: string;
  attachments?: { filename: string; contentType?: string; bytes: Uint8Array }[];
}

export interface FakeDiscordOptions {
  token?: string;
  /** Answer `gateway/bot` (and everything else) with 401, as for a revoked token. */
  rejectToken?: boolean;
  /** Clock for message timestamps and snowflakes; default `Date.now`. */
  now?: () => number;
  heartbeatIntervalMs?: number;
  /** Close IDENTIFY with 4014 when it asks for Message Content (the privileged intent is off). */
  refusesMessageContent?: boolean;
}

const API_PREFIX = '/api/v10';
/** Discord's default attachment limit without boosts ("Uploading Files", `developers/reference.mdx`). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_CONTENT_CHARS = 2000;

export class FakeDiscord {
  readonly token: string;
  rejectToken: boolean;
  readonly bot: FakeUser = { id: '1000000000000000001', username: 'deerflow-bot', bot: true };
  readonly applicationId = '1000000000000000002';
  readonly guildId = '3000000000000000001';
  /** Two text channels in the guild. */
  readonly channelIds = { general: '4000000000000000001', random: '4000000000000000002' } as const;
  /** A role in the guild besides @everyone (whose id is the guild's). */
  readonly roleIds = { moderators: '5000000000000000001' } as const;
  readonly rateLimitViolations: RateLimitViolation[] = [];
  readonly reactions: { channelId: string; messageId: string; emoji: string; at: number }[] = [];
  readonly typing: { channelId: string; at: number }[] = [];
  readonly uploads: { channelId: string; messageId: string; filename: string; contentType: string; bytes: Uint8Array; at: number }[] = [];
  readonly downloads: { path: string; status: number }[] = [];
  readonly gateway: FakeGateway;
  readonly store: DiscordStore;

  private readonly now: () => number;
  private readonly ids = new SnowflakeMaker();
  private readonly recorded: RecordedCall[] = [];
  private readonly faults = new Map<RouteName, Fault[]>();
  private readonly blockedUntil = new Map<string, number>();
  private readonly waiters = new Waiters('FakeDiscord');
  private readonly users = new Map<string, FakeUser>();
  private server: Server | undefined;
  private port = 0;

  constructor(options: FakeDiscordOptions = {}) {
    this.token = options.token ?? 'fake-discord-token';
    this.rejectToken = options.rejectToken ?? false;
    this.now = options.now ?? Date.now;
    this.store = new DiscordStore(this.ids, this.now);
    this.users.set(this.bot.id, this.bot);
    for (const [name, id] of Object.entries(this.channelIds)) {
      this.store.channels.set(id, { id, type: CHANNEL_TYPES.guildText, name, guildId: this.guildId });
    }
    this.gateway = new FakeGateway({
      token: () => this.token,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 30_000,
      refusesMessageContent: () => options.refusesMessageContent ?? false,
      resumeUrl: () => this.gatewayUrl,
      ready: (sessionId, resumeUrl) => ({
        v: 10,
        user: { ...userPayload(this.bot), verified: true, flags: 0 },
        guilds: [{ id: this.guildId, unavailable: true }],
        session_id: sessionId,
        resume_gateway_url: resumeUrl,
        shard: [0, 1],
        application: { id: this.applicationId, flags: 0 },
      }),
      guilds: () => [this.guildPayload()],
      changed: () => this.emit(),
    });
  }

  /** `http://127.0.0.1:<port>/api` (discord.js adds `/v10`); valid after `start()`. */
  get apiRoot(): string {
    return `${this.origin}/api`;
  }

  get gatewayUrl(): string {
    return `${this.origin.replace('http', 'ws')}/gateway`;
  }

  private get origin(): string {
    if (!this.server) throw new Error('FakeDiscord is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  get calls(): readonly RecordedCall[] {
    return this.recorded;
  }

  callsTo(route: RouteName): RecordedCall[] {
    return this.recorded.filter((call) => call.route === route);
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) this.answerError(res, new DiscordApiFailure(500, 0, `500: ${String(error)}`));
      });
    });
    server.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').startsWith('/gateway')) this.gateway.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await this.gateway.close();
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** The next call(s) of `route` get `fault`, once each. */
  failNext(route: RouteName, fault: Fault, times = 1): void {
    const list = this.faults.get(route) ?? [];
    for (let i = 0; i < times; i++) list.push(fault);
    this.faults.set(route, list);
  }

  /**
   * A person writes; dispatched as MESSAGE_CREATE (kept for a resume when the socket is down).
   * `content` goes out as typed, as Discord's client sends it: it encodes nothing, and what its
   * autocomplete would insert (`<@id>`, `<#id>`, `<:name:id>`) a test types itself.
   */
  sendUserMessage(input: UserMessageInput): StoredMessage {
    this.users.set(input.author.id, input.author);
    const channel = input.channelId === undefined ? this.store.dmChannel(input.author) : this.store.channel(input.channelId);
    const at = this.now();
    const attachments: StoredAttachment[] = (input.attachments ?? []).map((a) => ({
      id: this.ids.next(at),
      filename: a.filename,
      contentType: a.contentType ?? 'application/octet-stream',
      bytes: a.bytes,
    }));
    const message = this.store.add(
      {
        channelId: channel.id,
        author: input.author,
        content: input.content,
        ...(input.replyToMessageId === undefined ? {} : { replyTo: input.replyToMessageId }),
        attachments,
      },
      at,
    );
    const payload = this.payloadOf(message);
    this.gateway.dispatch('MESSAGE_CREATE', channel.type === CHANNEL_TYPES.dm ? { ...payload, channel_type: CHANNEL_TYPES.dm } : payload);
    this.emit();
    return message;
  }

  /** The DM channel id between the bot and `user` (made on first use). */
  dmChannelId(user: FakeUser): string {
    this.users.set(user.id, user);
    return this.store.dmChannel(user).id;
  }

  /** The bot's messages in a channel (or thread), oldest first. */
  botMessages(channelId: string): StoredMessage[] {
    return this.store.inChannel(channelId).filter((m) => m.author.id === this.bot.id);
  }

  /** What Discord's client shows for a message (`display.ts`), resolving mentions with the fake's users, roles and channels. */
  display(message: StoredMessage): DiscordDisplay {
    const channels = new Map([...this.store.channels.values()].flatMap((c) => (c.name === undefined ? [] : [[c.id, c.name] as const])));
    const roles = new Map(Object.entries(this.roleIds).map(([name, id]) => [id, name] as const));
    return displayOf(message.content, { users: this.users, roles, channels });
  }

  threads(): FakeChannel[] {
    return [...this.store.channels.values()].filter((c) => c.type === CHANNEL_TYPES.publicThread);
  }

  /** Resolves with the predicate's first truthy value, checked after every call and gateway frame. */
  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  private emit(): void {
    this.waiters.notify();
  }

  private payloadOf(message: StoredMessage): Record<string, unknown> {
    return messagePayload(message, { store: this.store, cdnRoot: `${this.origin}/attachments`, users: this.users });
  }

  private guildPayload(): Record<string, unknown> {
    const channels = [...this.store.channels.values()].filter((c) => c.guildId === this.guildId);
    return {
      id: this.guildId,
      name: 'Fake Guild',
      icon: null,
      owner_id: '2000000000000000001',
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      premium_tier: 0,
      system_channel_flags: 0,
      preferred_locale: 'en-US',
      features: [],
      unavailable: false,
      large: false,
      member_count: 3,
      joined_at: new Date(0).toISOString(),
      roles: [
        { id: this.guildId, name: '@everyone', permissions: '1071698660929', position: 0, color: 0, hoist: false, managed: false, mentionable: false, flags: 0 },
        ...Object.entries(this.roleIds).map(([name, id]) => ({ id, name, permissions: '0', position: 1, color: 0, hoist: false, managed: false, mentionable: true, flags: 0 })),
      ],
      emojis: [],
      stickers: [],
      members: [],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      channels: channels.filter((c) => c.type === CHANNEL_TYPES.guildText).map(channelPayload),
      threads: channels.filter((c) => c.type === CHANNEL_TYPES.publicThread).map(channelPayload),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname.startsWith('/attachments/')) {
      this.serveAttachment(url.pathname, res);
      return;
    }
    const at = Date.now();
    const body = await readBody(req);
    const path = url.pathname.startsWith(API_PREFIX) ? url.pathname.slice(API_PREFIX.length) : url.pathname;
    const { route, channelId } = routeOf(req.method ?? 'GET', path);
    const call: RecordedCall = { route, method: req.method ?? 'GET', path, at, ...(channelId ? { channelId } : {}) };
    this.recorded.push(call);
    try {
      const parsed = await parseBody(req, body);
      if (parsed.json !== undefined) call.body = parsed.json;
      if (this.rejectToken || req.headers.authorization !== `Bot ${this.token}`) throw new DiscordApiFailure(401, 0, '401: Unauthorized');
      this.checkRateLimit(route, channelId, at);
      const fault = this.faults.get(route)?.shift();
      if (fault && 'isApplied' in fault && fault.isApplied) await this.route(req.method ?? 'GET', path, parsed, at);
      if (fault) this.serveFault(res, fault, channelId, at);
      else this.answer(res, await this.route(req.method ?? 'GET', path, parsed, at));
    } catch (error) {
      const failure = error instanceof DiscordApiFailure ? error : new DiscordApiFailure(500, 0, String(error));
      this.answerError(res, failure);
    }
    call.status = res.statusCode;
    this.emit();
  }

  private checkRateLimit(route: RouteName, channelId: string | undefined, at: number): void {
    if (channelId === undefined || (route !== 'send' && route !== 'edit')) return;
    const until = this.blockedUntil.get(channelId);
    if (until !== undefined && at < until) this.rateLimitViolations.push({ route, channelId, at, blockedUntil: until });
  }

  private serveFault(res: ServerResponse, fault: Fault, channelId: string | undefined, at: number): void {
    if (!('retryAfterMs' in fault)) {
      this.answerError(res, new DiscordApiFailure(fault.status, fault.code, fault.message));
      return;
    }
    const seconds = fault.retryAfterMs / 1000;
    if (channelId !== undefined) this.blockedUntil.set(channelId, at + fault.retryAfterMs);
    // Discord's 429 (`developers/topics/rate-limits.mdx`): body and headers both say how long.
    res.writeHead(429, {
      'content-type': 'application/json',
      'retry-after': String(seconds),
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String((at + fault.retryAfterMs) / 1000),
      'x-ratelimit-reset-after': String(seconds),
      'x-ratelimit-bucket': 'fake-bucket-messages',
      'x-ratelimit-scope': fault.isGlobal ? 'global' : 'user',
      ...(fault.isGlobal ? { 'x-ratelimit-global': 'true' } : {}),
    });
    res.end(JSON.stringify({ message: 'You are being rate limited.', retry_after: seconds, global: fault.isGlobal ?? false }));
  }

  private async route(method: string, path: string, body: ParsedBody, at: number): Promise<unknown> {
    const parts = path.split('/').filter(Boolean);
    if (method === 'GET' && path === '/gateway/bot') {
      return { url: this.gatewayUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 } };
    }
    if (method === 'GET' && path === '/users/@me') return userPayload(this.bot);
    const [root, channelId = '', sub, messageId, tail, emoji] = parts;
    if (root !== 'channels') throw new DiscordApiFailure(404, 0, '404: Not Found');
    if (sub === 'typing' && method === 'POST') {
      this.store.channel(channelId);
      this.typing.push({ channelId, at });
      return undefined;
    }
    if (sub !== 'messages') throw new DiscordApiFailure(404, 0, '404: Not Found');
    if (messageId === undefined && method === 'POST') return this.createMessage(channelId, body, at);
    if (messageId === undefined) throw new DiscordApiFailure(405, 0, '405: Method Not Allowed');
    if (tail === undefined && method === 'PATCH') return this.editMessage(channelId, messageId, body, at);
    if (tail === undefined && method === 'GET') return this.payloadOf(this.store.message(channelId, messageId));
    if (tail === 'reactions' && method === 'PUT' && emoji !== undefined) {
      this.store.message(channelId, messageId);
      this.reactions.push({ channelId, messageId, emoji: decodeURIComponent(emoji), at });
      return undefined;
    }
    if (tail === 'threads' && method === 'POST') return this.startThread(channelId, messageId, body);
    throw new DiscordApiFailure(404, 0, '404: Not Found');
  }

  private createMessage(channelId: string, body: ParsedBody, at: number): unknown {
    const channel = this.store.channel(channelId);
    const json = (body.json ?? {}) as {
      content?: string;
      message_reference?: { message_id?: string };
      allowed_mentions?: unknown;
      nonce?: string;
      enforce_nonce?: boolean;
    };
    // `enforce_nonce`: a create repeating a recent nonce gets the message already made.
    const repeated = json.enforce_nonce && json.nonce ? this.store.inChannel(channelId).find((m) => m.nonce === json.nonce) : undefined;
    if (repeated) return this.payloadOf(repeated);
    const content = json.content ?? '';
    if (content.length > MAX_CONTENT_CHARS) {
      throw new DiscordApiFailure(400, 50035, 'Invalid Form Body (content: Must be 2000 or fewer in length.)');
    }
    if (content.length === 0 && body.files.length === 0) throw new DiscordApiFailure(400, 50006, 'Cannot send an empty message');
    const tooBig = body.files.find((f) => f.bytes.byteLength > MAX_UPLOAD_BYTES);
    if (tooBig) throw new DiscordApiFailure(413, 40005, 'Request entity too large');
    const replyTo = json.message_reference?.message_id;
    const attachments = body.files.map((f) => ({ id: this.ids.next(this.now()), filename: f.filename, contentType: f.contentType, bytes: f.bytes }));
    const message = this.store.add(
      {
        channelId: channel.id,
        author: this.bot,
        content,
        ...(replyTo ? { replyTo } : {}),
        ...(json.nonce ? { nonce: json.nonce } : {}),
        attachments,
        allowedMentions: json.allowed_mentions,
        pings: pingsOf(content, json.allowed_mentions, replyTo !== undefined),
      },
      this.now(),
    );
    for (const a of attachments) this.uploads.push({ channelId, messageId: message.id, filename: a.filename, contentType: a.contentType, bytes: a.bytes, at });
    const payload = this.payloadOf(message);
    // Discord echoes the bot's own messages over the gateway (sdk-recipes "More gotchas").
    this.gateway.dispatch('MESSAGE_CREATE', channel.type === CHANNEL_TYPES.dm ? { ...payload, channel_type: CHANNEL_TYPES.dm } : payload);
    return payload;
  }

  private editMessage(channelId: string, messageId: string, body: ParsedBody, at: number): unknown {
    const json = (body.json ?? {}) as { content?: string; allowed_mentions?: unknown };
    const existing = this.store.message(channelId, messageId);
    if (existing.author.id !== this.bot.id) throw new DiscordApiFailure(403, 50005, 'Cannot edit a message authored by another user');
    const content = json.content ?? existing.content;
    if (content.length > MAX_CONTENT_CHARS) {
      throw new DiscordApiFailure(400, 50035, 'Invalid Form Body (content: Must be 2000 or fewer in length.)');
    }
    const message = this.store.edit(channelId, messageId, content, at);
    message.allowedMentions = json.allowed_mentions;
    return this.payloadOf(message);
  }

  private startThread(channelId: string, messageId: string, body: ParsedBody): unknown {
    const message = this.store.message(channelId, messageId);
    const parent = this.store.channel(channelId);
    if (parent.type !== CHANNEL_TYPES.guildText) throw new DiscordApiFailure(400, 50024, 'Cannot execute action on this channel type');
    const name = (body.json as { name?: string } | undefined)?.name ?? '';
    if (name.length === 0 || name.length > 100) throw new DiscordApiFailure(400, 50035, 'Invalid Form Body (name)');
    const thread = this.store.addThread(message, name, this.bot.id);
    const payload = channelPayload(thread);
    this.gateway.dispatch('THREAD_CREATE', { ...payload, newly_created: true });
    return payload;
  }

  private serveAttachment(pathname: string, res: ServerResponse): void {
    const [, , channelId = '', attachmentId = ''] = pathname.split('/');
    const attachment = this.store
      .inChannel(channelId)
      .flatMap((m) => m.attachments)
      .find((a) => a.id === attachmentId);
    const status = attachment ? 200 : 404;
    this.downloads.push({ path: pathname, status });
    if (!attachment) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': attachment.contentType, 'content-length': String(attachment.bytes.byteLength) });
    res.end(Buffer.from(attachment.bytes));
  }

  private answer(res: ServerResponse, result: unknown): void {
    if (result === undefined) {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(result));
  }

  private answerError(res: ServerResponse, failure: DiscordApiFailure): void {
    res.writeHead(failure.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ message: failure.message, code: failure.code }));
  }
}
