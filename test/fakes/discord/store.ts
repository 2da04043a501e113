import type { Pings } from './display.js';

/**
 * What the fake Discord keeps: channels (guild text channels, threads, DMs), every message with
 * its edit history, reactions, typing and uploads. Payloads are built in Discord's wire shapes
 * (`developers/resources/message.mdx`, `channel.mdx`).
 */

/** Discord's epoch (2015-01-01), for snowflakes. */
const DISCORD_EPOCH_MS = 1_420_070_400_000n;

export const CHANNEL_TYPES = { guildText: 0, dm: 1, publicThread: 11 } as const;

/** A user as the fake sends it in payloads. */
export interface FakeUser {
  id: string;
  username: string;
  bot?: boolean;
  global_name?: string | null;
}

export interface FakeChannel {
  id: string;
  type: number;
  name?: string;
  /** Guild channels and threads. */
  guildId?: string;
  /** Threads: the text channel they sit in. */
  parentId?: string;
  /** DMs: the person. */
  recipient?: FakeUser;
  ownerId?: string;
}

export interface StoredAttachment {
  id: string;
  filename: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface StoredMessage {
  id: string;
  channelId: string;
  author: FakeUser;
  content: string;
  /** `message_reference.message_id`. */
  replyTo?: string;
  /** Texts in order: the original, then each edit. */
  history: string[];
  sentAt: number;
  editedAt: number[];
  attachments: StoredAttachment[];
  /** The create's `nonce`, when it sent one. */
  nonce?: string;
  /** `allowed_mentions` the bot sent with it (the last one, for edits). */
  allowedMentions?: unknown;
  /** Whom the message notified when it was posted (edits notify nobody). */
  pings?: Pings;
}

/** A Discord error answer. */
export class DiscordApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'DiscordApiFailure';
  }
}

/** Snowflakes that sort by time, made from the fake's clock. */
export class SnowflakeMaker {
  private counter = 0n;
  next(nowMs: number): string {
    this.counter = (this.counter + 1n) % 4096n;
    return String(((BigInt(nowMs) - DISCORD_EPOCH_MS) << 22n) | (1n << 17n) | this.counter);
  }
}

/** The time a snowflake was made, ms since the epoch. */
export function snowflakeTime(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
}

export class DiscordStore {
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new Map<string, StoredMessage>();
  private readonly dmChannelOf = new Map<string, string>();

  constructor(
    private readonly ids: SnowflakeMaker,
    private readonly now: () => number,
  ) {}

  channel(id: string): FakeChannel {
    const channel = this.channels.get(id);
    if (!channel) throw new DiscordApiFailure(404, 10003, 'Unknown Channel');
    return channel;
  }

  message(channelId: string, messageId: string): StoredMessage {
    const message = this.messages.get(messageId);
    if (!message || message.channelId !== channelId) throw new DiscordApiFailure(404, 10008, 'Unknown Message');
    return message;
  }

  /** The DM channel between the bot and `user`, made on first use. */
  dmChannel(user: FakeUser): FakeChannel {
    let id = this.dmChannelOf.get(user.id);
    if (id === undefined) {
      id = this.ids.next(this.now());
      this.dmChannelOf.set(user.id, id);
      this.channels.set(id, { id, type: CHANNEL_TYPES.dm, recipient: user });
    }
    return this.channel(id);
  }

  add(input: Omit<StoredMessage, 'id' | 'history' | 'sentAt' | 'editedAt'>, at: number): StoredMessage {
    const id = this.ids.next(at);
    const message: StoredMessage = { ...input, id, history: [input.content], sentAt: at, editedAt: [] };
    this.messages.set(id, message);
    return message;
  }

  edit(channelId: string, messageId: string, content: string, at: number): StoredMessage {
    const message = this.message(channelId, messageId);
    message.content = content;
    message.history.push(content);
    message.editedAt.push(at);
    return message;
  }

  inChannel(channelId: string): StoredMessage[] {
    return [...this.messages.values()].filter((m) => m.channelId === channelId).sort((a, b) => a.sentAt - b.sentAt);
  }

  /** A thread started from `message`: Discord gives it the message's id. */
  addThread(message: StoredMessage, name: string, ownerId: string): FakeChannel {
    const parent = this.channel(message.channelId);
    if (this.channels.has(message.id)) throw new DiscordApiFailure(400, 160004, 'A thread has already been created for this message');
    const thread: FakeChannel = {
      id: message.id,
      type: CHANNEL_TYPES.publicThread,
      name,
      ownerId,
      ...(parent.guildId === undefined ? {} : { guildId: parent.guildId }),
      parentId: parent.id,
    };
    this.channels.set(thread.id, thread);
    return thread;
  }
}

/** A channel as Discord sends it. */
export function channelPayload(channel: FakeChannel): Record<string, unknown> {
  if (channel.type === CHANNEL_TYPES.dm) {
    return { id: channel.id, type: channel.type, recipients: channel.recipient ? [userPayload(channel.recipient)] : [] };
  }
  const base = { id: channel.id, type: channel.type, name: channel.name, guild_id: channel.guildId };
  if (channel.type !== CHANNEL_TYPES.publicThread) return { ...base, position: 0, permission_overwrites: [], nsfw: false };
  return {
    ...base,
    parent_id: channel.parentId,
    owner_id: channel.ownerId,
    member_count: 1,
    message_count: 0,
    thread_metadata: { archived: false, auto_archive_duration: 1440, locked: false, archive_timestamp: new Date().toISOString() },
  };
}

export function userPayload(user: FakeUser): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    discriminator: '0',
    global_name: user.global_name ?? null,
    avatar: null,
    bot: user.bot ?? false,
  };
}

export interface MessagePayloadContext {
  store: DiscordStore;
  /** Base of attachment URLs served by the fake. */
  cdnRoot: string;
  /** Users that `<@id>` in content resolves to. */
  users: ReadonlyMap<string, FakeUser>;
  /** Include `referenced_message` (one level, as Discord does). */
  isNested?: boolean;
}

/** A message as Discord sends it (REST answers and MESSAGE_CREATE). */
export function messagePayload(message: StoredMessage, context: MessagePayloadContext): Record<string, unknown> {
  const channel = context.store.channels.get(message.channelId);
  const mentions = [...message.content.matchAll(/<@!?(\d+)>/g)]
    .map((match) => context.users.get(match[1] ?? ''))
    .filter((user): user is FakeUser => user !== undefined)
    .map(userPayload);
  const referenced = message.replyTo === undefined ? undefined : context.store.messages.get(message.replyTo);
  return {
    id: message.id,
    channel_id: message.channelId,
    ...(channel?.guildId === undefined ? {} : { guild_id: channel.guildId }),
    author: userPayload(message.author),
    content: message.content,
    timestamp: new Date(message.sentAt).toISOString(),
    edited_timestamp: message.editedAt.length === 0 ? null : new Date(message.editedAt.at(-1) ?? 0).toISOString(),
    tts: false,
    mention_everyone: /@(?:everyone|here)/.test(message.content),
    mentions,
    mention_roles: [...new Set([...message.content.matchAll(/<@&(\d+)>/g)].map((match) => match[1]))],
    attachments: message.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.bytes.byteLength,
      content_type: a.contentType,
      url: `${context.cdnRoot}/${message.channelId}/${a.id}/${encodeURIComponent(a.filename)}?ex=0&is=0&hm=fake`,
      proxy_url: `${context.cdnRoot}/${message.channelId}/${a.id}/${encodeURIComponent(a.filename)}`,
    })),
    embeds: [],
    pinned: false,
    type: message.replyTo === undefined ? 0 : 19,
    flags: 0,
    ...(message.replyTo === undefined
      ? {}
      : {
          message_reference: { type: 0, message_id: message.replyTo, channel_id: message.channelId, guild_id: channel?.guildId },
          ...(context.isNested || referenced === undefined
            ? {}
            : { referenced_message: messagePayload(referenced, { ...context, isNested: true }) }),
        }),
  };
}
