import { createEditReply } from '../../src/channel/edit-reply.js';
import { SplitPartRenderer } from '../../src/channel/markdown.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { ReplyFrame } from './connection.js';
import { REQ_ID } from './decide.js';
import { WECOM_LIMITS } from './limits.js';
import { WECOM_MARKDOWN_DIALECT } from './render.js';
import type { WeComSender } from './relay.js';

export interface WeComEgressOptions {
  /** The long connection, here or through the process holding it. */
  connection: WeComSender;
  /** The acknowledgement's text: what a placeholder stream shows until the first update. */
  workingMessage: string;
  gate: RateGate;
  logger: Logger;
  now: () => number;
}

/** Ids of markdown messages (which WeCom cannot edit) start with this. */
const MARKDOWN_ID = 'markdown:';

/**
 * Replies (reference §6.7). With the callback's `req_id` (every message a member sent): the
 * answer streams into the acknowledgement's stream (full text each update, one a second), the
 * final's first part finishes it (`finish: true`) and further parts follow as markdown messages
 * (`aibot_send_msg`). A stream WeCom no longer takes (finished, or over 6 minutes old) makes the
 * final go out as markdown. Without a `req_id` (a scheduled message) only the final is sent, as
 * markdown. Rate limits close the chat's gate for `defaultRetryAfterMs`.
 */
export function createWeComEgress(options: WeComEgressOptions): ChannelEgress {
  return {
    reply: (target) => {
      const reqId = target.platformData?.[REQ_ID];
      return typeof reqId === 'string' ? streamReply(target, { headers: { req_id: reqId } }, options) : markdownReply(target, options);
    },
  };
}

/**
 * Renders every text of one reply (the agent's Markdown) once: a part sent after an earlier part
 * of the same final continues it (a code block it left open is reopened).
 */
function replyRenderer(target: ReplyTarget): (text: string, replyToMessageId?: string) => string {
  const renderer = new SplitPartRenderer(WECOM_MARKDOWN_DIALECT);
  return (text, replyToMessageId) => renderer.render(text, replyToMessageId !== undefined && replyToMessageId !== target.replyTo.messageId);
}

function markdownReply(target: ReplyTarget, options: WeComEgressOptions): Reply {
  let sequence = 0;
  const render = replyRenderer(target);
  const inner = createEditReply(
    {
      send: async (text, replyToMessageId) => {
        await options.connection.sendMarkdown(target.chatId, render(text, replyToMessageId));
        return `${MARKDOWN_ID}${sequence++}`;
      },
      edit: async () => {
        throw new ChannelError('wecom', 'CHANNEL_REJECTED', 'WeCom markdown messages cannot be edited');
      },
    },
    baseOptions(target, options),
  );
  // Nothing to stream into: partials are not shown.
  return { update: () => undefined, finish: (text) => inner.finish(text), finalLeft: () => inner.finalLeft() };
}

function streamReply(target: ReplyTarget, frame: ReplyFrame, options: WeComEgressOptions): Reply {
  const { connection } = options;
  let isFinishing = false;
  let sequence = 0;
  const render = replyRenderer(target);
  /** What each stream of this reply shows, and whether it was finished. */
  const streams = new Map<string, { text: string; isFinished: boolean }>();
  const placeholderId = target.replyTo.placeholderId;
  if (placeholderId !== undefined) streams.set(placeholderId, { text: options.workingMessage, isFinished: false });
  const inner = createEditReply(
    {
      send: async (text, replyToMessageId) => {
        const content = render(text, replyToMessageId);
        if (isFinishing) {
          await connection.sendMarkdown(target.chatId, content);
          return `${MARKDOWN_ID}${sequence++}`;
        }
        const streamId = connection.newStreamId();
        await connection.replyStream(frame, streamId, content, false);
        streams.set(streamId, { text: content, isFinished: false });
        return streamId;
      },
      edit: async (streamId, text) => {
        const stream = streams.get(streamId);
        if (stream === undefined || stream.isFinished) throw new ChannelError('wecom', 'CHANNEL_REJECTED', 'WeCom stream already finished');
        const finish = isFinishing;
        const content = render(text);
        await connection.replyStream(frame, streamId, content, finish);
        streams.set(streamId, { text: content, isFinished: finish });
      },
    },
    baseOptions(target, options),
  );
  return {
    update: (text) => inner.update(text),
    abandon: () => inner.abandon(),
    resumeAnchor: () => inner.resumeAnchor(),
    finalLeft: () => inner.finalLeft(),
    finish: async (text, outcome) => {
      isFinishing = true;
      // On failure the streams stay open: the outbox's later attempt finishes the same one.
      await inner.finish(text, outcome);
      // A stream left open shows its spinner until WeCom ends it: finish each with what it shows.
      for (const [streamId, stream] of streams) {
        if (stream.isFinished) continue;
        stream.isFinished = true;
        await connection.replyStream(frame, streamId, stream.text, true).catch((error: unknown) => {
          options.logger.warn({ err: describeError(error) }, 'closing the WeCom stream failed');
        });
      }
    },
  };
}

function baseOptions(target: ReplyTarget, options: WeComEgressOptions) {
  const placeholderId = target.replyTo.placeholderId;
  const replyToMessageId = target.replyTo.messageId;
  return {
    ...(placeholderId === undefined ? {} : { placeholderId }),
    ...(replyToMessageId === undefined ? {} : { replyToMessageId }),
    maxChars: WECOM_LIMITS.maxMessageChars,
    minEditIntervalMs: WECOM_LIMITS.streamUpdateIntervalMs,
    gate: options.gate,
    gateKey: target.chatId,
    now: options.now,
    logger: options.logger,
    platform: 'wecom',
  };
}
