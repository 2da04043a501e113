import type { ReplyTarget } from '../../src/channel/types.js';
import { type DingTalkApi, toChannelError } from './api.js';

/** A message's session webhook: replies go there while it is valid (reference §6.5, platform-limits §5.2). */
export interface SessionWebhook {
  url: string;
  /** Ms since the epoch. */
  expiresAt: number;
}

/** Session webhooks by the message id they answer; the oldest are forgotten past `maxEntries`. */
export class SessionWebhooks {
  private readonly entries = new Map<string, SessionWebhook>();

  constructor(private readonly maxEntries = 10_000) {}

  remember(messageId: string, webhook: SessionWebhook): void {
    this.entries.set(messageId, webhook);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The webhook for `messageId` if it is still valid at `now` (with a minute to spare). */
  valid(messageId: string | undefined, now: number): SessionWebhook | undefined {
    const webhook = messageId === undefined ? undefined : this.entries.get(messageId);
    return webhook && webhook.expiresAt - 60_000 > now ? webhook : undefined;
  }
}

const TITLE = 'DeerFlow';

/**
 * Sends robot messages to a conversation: through the message's session webhook while it is
 * valid, else through the robot API (`oToMessages/batchSend` for P2P, `groupMessages/send` for
 * groups). Rejects with `ChannelError`.
 */
export class RobotSender {
  constructor(
    private readonly api: DingTalkApi,
    private readonly sessions: SessionWebhooks,
    private readonly now: () => number,
  ) {}

  /** DingTalk markdown, already rendered (`render.ts`), as a `markdown` / `sampleMarkdown` message. */
  markdown(target: ReplyTarget, markdown: string): Promise<void> {
    return this.send(target, { msgtype: 'markdown', markdown: { title: TITLE, text: markdown } }, 'sampleMarkdown', { title: TITLE, text: markdown });
  }

  /** Plain text (the acknowledgement, bind answers). */
  text(target: ReplyTarget, content: string): Promise<void> {
    return this.send(target, { msgtype: 'text', text: { content } }, 'sampleText', { content });
  }

  /** A robot API message of any `msgKey` (files); never the session webhook. */
  async robot(target: ReplyTarget, msgKey: string, msgParam: Record<string, unknown>): Promise<void> {
    const body = { msgKey, msgParam: JSON.stringify(msgParam), robotCode: this.api.robotCode };
    if (target.isPrivateChat) await this.api.call('POST', '/v1.0/robot/oToMessages/batchSend', { ...body, userIds: [target.chatId] });
    else await this.api.call('POST', '/v1.0/robot/groupMessages/send', { ...body, openConversationId: target.chatId });
  }

  private async send(target: ReplyTarget, sessionBody: unknown, msgKey: string, msgParam: Record<string, unknown>): Promise<void> {
    const webhook = this.sessions.valid(target.replyTo.messageId, this.now());
    if (webhook === undefined) return this.robot(target, msgKey, msgParam);
    const response = await this.api.fetch(webhook.url, 'session webhook', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(sessionBody),
    });
    const answer = (await response.json().catch(() => ({}))) as { errcode?: number };
    if (response.ok && (answer.errcode ?? 0) === 0) return;
    // An expired or refused session webhook: the robot API reaches the same conversation.
    if (response.status === 429) throw toChannelError(429, undefined, 'session webhook', response.headers.get('retry-after'));
    return this.robot(target, msgKey, msgParam);
  }
}
