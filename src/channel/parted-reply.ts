import type { createEditReply } from './edit-reply.js';
import type { FinalLeft, Reply, ReplyAnchor } from './types.js';

/** An edit-style reply (`edit-reply.ts`) carrying one message's worth of Markdown. */
type EditStyleReply = ReturnType<typeof createEditReply>;

export interface PartedReplyOptions {
  /** The reply partials stream into; the final's first part finishes it. */
  first: EditStyleReply;
  /** A reply that posts one further part as a new message replying to `replyToMessageId`. */
  next(replyToMessageId: string | undefined): EditStyleReply;
  /** The final cut into parts that each render within one message, in order (`markdownParts`). */
  parts(markdown: string): string[];
}

/**
 * A reply whose final goes out in parts cut before rendering, so each part shows on its own (a
 * code block cut in two is two blocks, each fenced). The first part finishes the streamed
 * message; each further part is a new message replying to the one before, through its own
 * edit-style reply, so rate limits, retries and the channel's gate apply to it as to any final.
 * `finalLeft()` gives the Markdown of the parts not yet shown, after the last part shown.
 */
export function partedReply(options: PartedReplyOptions): Reply & Required<Pick<Reply, 'abandon' | 'resumeAnchor' | 'finalLeft'>> {
  let finishing: Promise<void> | undefined;
  let shown: { messageId: string; left: string } | undefined;
  const deliver = async (markdown: string): Promise<void> => {
    const parts = options.parts(markdown);
    // Nothing to show: the first reply delivers nothing for a blank final.
    if (parts.length === 0) return options.first.finish('');
    let reply = options.first;
    for (const [index, part] of parts.entries()) {
      if (index > 0) reply = options.next(shown?.messageId);
      await reply.finish(part);
      const messageId = reply.finalLeft()?.anchor.messageId;
      if (messageId !== undefined) shown = { messageId, left: parts.slice(index + 1).join('') };
    }
  };
  return {
    update: (markdown) => {
      if (finishing === undefined) options.first.update(markdown);
    },
    finish: (markdown) => {
      finishing ??= deliver(markdown);
      return finishing;
    },
    abandon: () => {
      finishing ??= Promise.resolve();
      options.first.abandon?.();
    },
    resumeAnchor: (): ReplyAnchor => options.first.resumeAnchor(),
    finalLeft: (): FinalLeft | undefined => shown && { text: shown.left, anchor: { messageId: shown.messageId } },
  };
}
