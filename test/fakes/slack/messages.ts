import { displayText, type SlackDisplay, type SlackTextFormat, type UserNameOf } from './display.js';

/**
 * What people see in the fake Slack workspace: channels with messages (top level and in
 * threads), each with its text history, reactions and files. Errors are Slack's own codes.
 */

/** A Web API error the fake answers with: `{ok:false, error}` (HTTP 200), or a 429 with Retry-After. */
export class SlackApiFailure extends Error {
  constructor(
    readonly error: string,
    readonly status = 200,
    readonly retryAfterSeconds?: number,
  ) {
    super(error);
    this.name = 'SlackApiFailure';
  }
}

/** `text` is truncated by Slack above 40,000 characters; the fake refuses instead so tests notice. */
export const MAX_TEXT_CHARS = 40_000;
/** `markdown_text` of the chat.*Stream methods: "Limit this field to 12,000 characters". */
export const MAX_MARKDOWN_CHARS = 12_000;

export type ChannelType = 'im' | 'channel';

export interface StoredFile {
  id: string;
  name: string;
  mimetype: string;
  bytes: Uint8Array;
}

interface StoredMessage {
  ts: string;
  user: string;
  botId: string | undefined;
  history: string[];
  /** How Slack reads each entry of `history`: `text` is mrkdwn, a stream's `markdown_text` Markdown. */
  formats: SlackTextFormat[];
  editedAt: number[];
  sentAt: number;
  threadTs: string | undefined;
  isDeleted: boolean;
  /** chat.startStream opened it and chat.stopStream has not closed it yet. */
  isStreaming: boolean;
  reactions: string[];
  files: StoredFile[];
}

/** One message as the channel shows it. */
export interface SlackMessageView {
  ts: string;
  from: 'bot' | 'user';
  user: string;
  text: string;
  /** `text` as the person sees it (see `display.ts`): the canonical form of the round-trip table. */
  shown: string;
  /** The native links `text` shows, in order. */
  links: SlackDisplay['links'];
  /** The thread it sits in (the root's ts); absent at top level and for a root itself. */
  threadTs?: string;
  history: string[];
  editedAt: number[];
  sentAt: number;
  reactions: string[];
  files: { id: string; name: string; size: number }[];
  isStreaming: boolean;
}

export class MessageStore {
  private readonly channels = new Map<string, { type: ChannelType; messages: Map<string, StoredMessage> }>();
  private lastTsMicros = 0;

  constructor(
    private readonly botUserId: string,
    private readonly botId: string,
    private readonly nameOf: UserNameOf = () => undefined,
  ) {}

  ensureChannel(channel: string, type: ChannelType): void {
    if (!this.channels.has(channel)) this.channels.set(channel, { type, messages: new Map() });
  }

  channelType(channel: string): ChannelType {
    return this.channelOf(channel).type;
  }

  /** A fresh, strictly increasing Slack ts (`seconds.micros`). */
  nextTs(at: number): string {
    this.lastTsMicros = Math.max(this.lastTsMicros + 1, at * 1000);
    const seconds = Math.floor(this.lastTsMicros / 1_000_000);
    const micros = this.lastTsMicros % 1_000_000;
    return `${seconds}.${String(micros).padStart(6, '0')}`;
  }

  addUserMessage(input: { channel: string; user: string; botId?: string; text: string; threadTs?: string; at: number; files?: StoredFile[] }): string {
    const stored = this.add(input.channel, {
      user: input.user,
      botId: input.botId,
      text: input.text,
      at: input.at,
      threadTs: input.threadTs,
    });
    stored.files = input.files ?? [];
    return stored.ts;
  }

  /** chat.postMessage. */
  postBotMessage(params: Record<string, unknown>, at: number): { ts: string; text: string } {
    const channel = this.requireString(params.channel, 'channel_not_found');
    const text = validateText(params.text);
    const threadTs = this.threadOf(channel, params.thread_ts);
    const stored = this.add(channel, { user: this.botUserId, botId: this.botId, text, at, threadTs });
    return { ts: stored.ts, text };
  }

  /** chat.update. */
  updateBotMessage(params: Record<string, unknown>, at: number): { ts: string; text: string } {
    const stored = this.botMessage(params.channel, params.ts, 'cant_update_message');
    const text = validateText(params.text);
    stored.history.push(text);
    stored.formats.push('mrkdwn');
    stored.editedAt.push(at);
    return { ts: stored.ts, text };
  }

  deleteBotMessage(params: Record<string, unknown>): void {
    this.botMessage(params.channel, params.ts, 'cant_delete_message').isDeleted = true;
  }

  /** chat.startStream: a streaming reply in a thread. */
  startStream(params: Record<string, unknown>, at: number): string {
    const channel = this.requireString(params.channel, 'channel_not_found');
    if (params.thread_ts === undefined) throw new SlackApiFailure('invalid_arguments');
    if (this.channelType(channel) === 'channel' && (params.recipient_user_id === undefined || params.recipient_team_id === undefined)) {
      throw new SlackApiFailure('missing_recipient_user_id');
    }
    const threadTs = this.threadOf(channel, params.thread_ts);
    const text = validateMarkdown(params.markdown_text ?? '');
    const stored = this.add(channel, { user: this.botUserId, botId: this.botId, text, at, threadTs, format: 'markdown' });
    stored.isStreaming = true;
    return stored.ts;
  }

  /** chat.appendStream: appends to the shown text. */
  appendStream(params: Record<string, unknown>, at: number): string {
    const stored = this.botMessage(params.channel, params.ts, 'message_not_found');
    if (!stored.isStreaming) throw new SlackApiFailure('message_not_in_streaming_state');
    const text = validateMarkdown(params.markdown_text);
    stored.history.push((stored.history.at(-1) ?? '') + text);
    stored.formats.push('markdown');
    stored.editedAt.push(at);
    return stored.ts;
  }

  stopStream(params: Record<string, unknown>, at: number): string {
    const stored = this.botMessage(params.channel, params.ts, 'message_not_found');
    if (!stored.isStreaming) throw new SlackApiFailure('message_not_in_streaming_state');
    if (params.markdown_text !== undefined) {
      stored.history.push((stored.history.at(-1) ?? '') + validateMarkdown(params.markdown_text));
      stored.formats.push('markdown');
      stored.editedAt.push(at);
    }
    stored.isStreaming = false;
    return stored.ts;
  }

  addReaction(params: Record<string, unknown>): void {
    const channel = this.requireString(params.channel, 'channel_not_found');
    const stored = this.channelOf(channel).messages.get(String(params.timestamp));
    if (!stored || stored.isDeleted) throw new SlackApiFailure('message_not_found');
    const name = this.requireString(params.name, 'invalid_name');
    if (stored.reactions.includes(name)) throw new SlackApiFailure('already_reacted');
    stored.reactions.push(name);
  }

  /** files.completeUploadExternal: one bot message carrying the files. */
  shareBotFiles(input: { channel: string; threadTs: unknown; text: string; files: StoredFile[]; at: number }): string {
    const threadTs = this.threadOf(input.channel, input.threadTs);
    const stored = this.add(input.channel, { user: this.botUserId, botId: this.botId, text: input.text, at: input.at, threadTs });
    stored.files = input.files;
    return stored.ts;
  }

  view(channel: string): SlackMessageView[] {
    const stored = this.channels.get(channel);
    if (!stored) return [];
    return [...stored.messages.values()]
      .filter((m) => !m.isDeleted)
      .map((m) => ({
        ts: m.ts,
        from: m.botId === this.botId ? 'bot' : 'user',
        user: m.user,
        text: m.history.at(-1) ?? '',
        ...displayText(m.history.at(-1) ?? '', m.formats.at(-1) ?? 'mrkdwn', this.nameOf),
        ...(m.threadTs === undefined ? {} : { threadTs: m.threadTs }),
        history: [...m.history],
        editedAt: [...m.editedAt],
        sentAt: m.sentAt,
        reactions: [...m.reactions],
        files: m.files.map((f) => ({ id: f.id, name: f.name, size: f.bytes.length })),
        isStreaming: m.isStreaming,
      }));
  }

  private add(
    channel: string,
    input: { user: string; botId: string | undefined; text: string; at: number; threadTs: string | undefined; format?: SlackTextFormat },
  ): StoredMessage {
    const stored: StoredMessage = {
      ts: this.nextTs(input.at),
      user: input.user,
      botId: input.botId,
      history: [input.text],
      formats: [input.format ?? 'mrkdwn'],
      editedAt: [],
      sentAt: input.at,
      threadTs: input.threadTs,
      isDeleted: false,
      isStreaming: false,
      reactions: [],
      files: [],
    };
    this.channelOf(channel).messages.set(stored.ts, stored);
    return stored;
  }

  /** A reply's thread: the root's ts; a thread_ts naming a reply resolves to its root, as Slack does. */
  private threadOf(channel: string, threadTs: unknown): string | undefined {
    if (threadTs === undefined || threadTs === '') return undefined;
    const target = this.channelOf(channel).messages.get(String(threadTs));
    if (!target) throw new SlackApiFailure('thread_not_found');
    return target.threadTs ?? target.ts;
  }

  private botMessage(channel: unknown, ts: unknown, notFound: string): StoredMessage {
    const stored = this.channelOf(this.requireString(channel, 'channel_not_found')).messages.get(String(ts));
    if (!stored || stored.isDeleted) throw new SlackApiFailure('message_not_found');
    if (stored.botId !== this.botId) throw new SlackApiFailure(notFound);
    return stored;
  }

  private channelOf(channel: string): { type: ChannelType; messages: Map<string, StoredMessage> } {
    const stored = this.channels.get(channel);
    if (!stored) throw new SlackApiFailure('channel_not_found');
    return stored;
  }

  private requireString(value: unknown, error: string): string {
    if (typeof value !== 'string' || value === '') throw new SlackApiFailure(error);
    return value;
  }
}

function validateText(text: unknown): string {
  if (typeof text !== 'string' || text.trim() === '') throw new SlackApiFailure('no_text');
  if (text.length > MAX_TEXT_CHARS) throw new SlackApiFailure('msg_too_long');
  return text;
}

function validateMarkdown(text: unknown): string {
  if (typeof text !== 'string') throw new SlackApiFailure('invalid_arguments');
  if (text.length > MAX_MARKDOWN_CHARS) throw new SlackApiFailure('msg_too_long');
  return text;
}
