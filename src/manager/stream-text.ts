import { withoutThinking } from '../agent/thinking.js';
import { isAssistantMessage, textOf } from './response.js';

/**
 * Assembles streamed assistant text, one buffer per message id (reference §4.7 A): only the
 * message being written now is shown, never tool output or echoed user turns, and never a
 * reasoning model's `<think>` text (issue #16).
 */
export class StreamText {
  private readonly buffers = new Map<string, string>();
  /** What `text` shows, worked out once per event: the manager reads it several times per token. */
  private visible = '';
  /** Buffers where a think tag was seen: only those are scanned for one (the rest show as they are). */
  private readonly thinking = new Set<string>();

  /** Feeds one `messages` event's data; returns true when the visible text changed. */
  accept(data: unknown): boolean {
    const [message, metadata] = Array.isArray(data) ? data : [data, undefined];
    if (!isAssistantMessage(message)) return false;
    const chunk = textOf(message);
    if (chunk === '') return false;
    const id = messageIdOf(message, metadata);
    const before = this.buffers.get(id) ?? '';
    // Some servers send the cumulative text, most send deltas; a strictly longer chunk that
    // starts with what we have is cumulative, anything else (even a repeat) is a delta.
    const after = chunk.length > before.length && chunk.startsWith(before) ? chunk : before + chunk;
    this.buffers.set(id, after);
    // A tag split across deltas is caught by looking a tag's length back into what came before.
    if (!this.thinking.has(id) && (before.slice(-THINK_TAG_CHARS) + chunk).includes('think')) this.thinking.add(id);
    const shown = this.visible;
    this.visible = this.thinking.has(id) ? withoutThinking(after) : after;
    return this.visible !== shown;
  }

  /** What the person may see of the message being written: '' while the model only thinks. */
  get text(): string {
    return this.visible;
  }
}

/** Long enough to hold the start of a split `</think>` tag. */
const THINK_TAG_CHARS = 8;

function messageIdOf(message: Record<string, unknown>, metadata: unknown): string {
  const id = message.id ?? message.message_id ?? (metadata as Record<string, unknown> | undefined)?.message_id;
  return typeof id === 'string' && id !== '' ? id : '__default__';
}

/**
 * When to show a partial (reference §4.7 A): the first text at once, then when ≥ 1 s passed
 * (`minIntervalMs`, a channel's `minPartialIntervalMs`) or ≥ 60 new characters arrived since the
 * last update.
 */
export class UpdateThrottle {
  private lastAt: number | undefined;
  private lastLength = 0;

  constructor(
    private readonly now: () => number,
    private readonly minIntervalMs = 1000,
    private readonly minNewChars = 60,
  ) {}

  shouldPublish(text: string): boolean {
    const now = this.now();
    const due =
      this.lastAt === undefined || now - this.lastAt >= this.minIntervalMs || text.length - this.lastLength >= this.minNewChars;
    if (due) {
      this.lastAt = now;
      this.lastLength = text.length;
    }
    return due;
  }
}
