import type { FinalLeft, Reply, ReplyAnchor } from '../../src/channel/types.js';
import { splitTelegramMarkdown } from './render.js';

/** An edit-style reply (`createEditReply`) for one message of a Telegram reply. */
type PartReply = Reply & Required<Pick<Reply, 'resumeAnchor' | 'finalLeft'>>;

/** Where a part reply starts: the first edits the placeholder or replies to the person, the others reply to the part before. */
export interface PartAnchor {
  placeholderId?: string;
  replyToMessageId?: string;
}

/**
 * A Telegram reply whose final may take several messages. The final's Markdown is cut into parts
 * that each render within one message (`splitTelegramMarkdown`: Telegram counts the text after
 * entity parsing, so the Markdown cannot be cut by its own length), and each part is delivered
 * by its own edit-style reply: the first streams partials and edits the placeholder, each later
 * one posts a new message replying to the part before. `finalLeft()` is the Markdown of the
 * parts not on screen yet, after the last part shown.
 */
export function createTelegramReply(partReply: (anchor: PartAnchor) => PartReply, anchor: PartAnchor): Reply {
  return new TelegramReply(partReply, anchor);
}

class TelegramReply implements Reply {
  private readonly first: PartReply;
  private finishing: Promise<void> | undefined;
  /** The message showing the last part delivered. */
  private lastShownId: string | undefined;
  /** The parts from the one being delivered on, joined. */
  private left = '';

  constructor(
    private readonly partReply: (anchor: PartAnchor) => PartReply,
    anchor: PartAnchor,
  ) {
    this.first = partReply(anchor);
  }

  update(text: string): void {
    this.first.update(text);
  }

  finish(text: string): Promise<void> {
    this.finishing ??= this.deliver(text);
    return this.finishing;
  }

  resumeAnchor(): ReplyAnchor {
    return this.first.resumeAnchor();
  }

  finalLeft(): FinalLeft | undefined {
    if (this.lastShownId === undefined) return undefined;
    return { text: this.left, anchor: { messageId: this.lastShownId } };
  }

  private async deliver(markdown: string): Promise<void> {
    const parts = splitTelegramMarkdown(markdown);
    if (parts.length === 0) {
      // Blank: the edit reply ends the stream without posting anything.
      await this.first.finish(markdown);
      return;
    }
    let reply = this.first;
    for (const [index, part] of parts.entries()) {
      if (index > 0) reply = this.partReply({ replyToMessageId: this.lastShownId });
      this.left = parts.slice(index).join('');
      await reply.finish(part);
      this.lastShownId = reply.finalLeft()?.anchor.messageId ?? this.lastShownId;
    }
    this.left = '';
  }
}
