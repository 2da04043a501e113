import type { HostedChats } from '../../src/channel/hosted-chats.js';
import type { Topic } from '../../src/channel/topic.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import { parsePlaceholderId } from './ids.js';
import { WEB_LIMITS } from './limits.js';
import { type LiveEvent, messageJson } from './wire.js';

export interface WebEgressOptions {
  chats: HostedChats;
  topic: Topic;
  now: () => number;
}

/**
 * Replies in the web chat: partials go to the conversation's open pages only, at most one every
 * `WEB_LIMITS.partialIntervalMs` (latest wins); the final replaces the acknowledgement row ingress
 * stored (or, without one, a scheduled result or an outbox resend, is a new row) and then reaches
 * the pages. A final that could not be stored rejects, so the outbox tries again.
 */
export function createWebEgress(options: WebEgressOptions): ChannelEgress {
  return { reply: (target) => new WebReply(target, options) };
}

class WebReply implements Reply {
  private pending: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastPartialAt = Number.NEGATIVE_INFINITY;
  private finishing: Promise<void> | undefined;
  private readonly placeholderId: number | undefined;

  constructor(
    private readonly target: ReplyTarget,
    private readonly options: WebEgressOptions,
  ) {
    const placeholderId = target.replyTo.placeholderId;
    this.placeholderId = placeholderId === undefined ? undefined : parsePlaceholderId(placeholderId)?.reply;
  }

  update(text: string): void {
    if (this.finishing || this.placeholderId === undefined) return;
    this.pending = text;
    if (this.timer) return;
    const waitMs = this.lastPartialAt + WEB_LIMITS.partialIntervalMs - this.options.now();
    if (waitMs <= 0) this.flushPartial();
    else this.timer = setTimeout(() => this.flushPartial(), waitMs);
  }

  finish(text: string): Promise<void> {
    this.finishing ??= this.deliverFinal(text);
    return this.finishing;
  }

  abandon(): void {
    this.finishing ??= Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flushPartial(): void {
    this.timer = undefined;
    const text = this.pending;
    if (text === undefined || this.finishing || this.placeholderId === undefined) return;
    this.pending = undefined;
    this.lastPartialAt = this.options.now();
    this.publish({ type: 'partial', message_id: this.placeholderId, text });
  }

  private async deliverFinal(text: string): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const { chats } = this.options;
    try {
      const replaced = this.placeholderId === undefined ? undefined : await chats.replaceMessage(this.placeholderId, { text, isFinal: true });
      const message = replaced ?? (await chats.addMessage(this.target.chatId, { author: 'agent', text, isFinal: true }));
      this.publish({ type: 'message', message: messageJson(message) });
    } catch (error) {
      throw new ChannelError('web', 'CHANNEL_UNAVAILABLE', 'the web chat could not store the reply', { cause: error });
    }
  }

  private publish(event: LiveEvent): void {
    this.options.topic.publish(this.target.chatId, event);
  }
}
