import { continuedUnder, createEditReply, type EditPrimitives } from '../../src/channel/edit-reply.js';
import type { IntervalBudget } from '../../src/channel/interval-budget.js';
import { openCodeFence } from '../../src/channel/markdown.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { SlackApi } from './api.js';
import { ReplyGate, WORKSPACE_KEY } from './budget.js';
import { SLACK_LIMITS } from './limits.js';
import { type NativeStreaming, SlackStreamReply } from './native-reply.js';
import { renderMrkdwn } from './render.js';

/** Reactions the adapter puts on the person's message (reference §6.1). */
export const SLACK_REACTIONS = { received: 'eyes', succeeded: 'white_check_mark', failed: 'x' } as const;

/** Attempts per final request while Slack answers 429 (each waits out Retry-After, bounded by `maxRetryAfterMs`). */
const FINAL_ATTEMPTS = 5;


export interface SlackEgressOptions {
  api: SlackApi;
  /** Shared with ingress; a 429 blocks `WORKSPACE_KEY` for every reply. */
  gate: RateGate;
  /** The Tier 3 `chat.update` budget of the workspace, shared by every reply. */
  updateBudget: IntervalBudget;
  /** The Tier 4 `chat.appendStream` budget of the workspace, shared by every stream. */
  appendBudget: IntervalBudget;
  native: NativeStreaming;
  logger: Logger;
  now: () => number;
}

/** Where a reply goes: the channel and the thread (the person's thread, or their top-level message). */
export function threadOf(target: ReplyTarget): { channel: string; threadTs: string | undefined } {
  return { channel: target.chatId, threadTs: target.topicId ?? target.replyTo.messageId };
}

/**
 * Replies go into the person's thread. They stream natively (chat.startStream/append/stop; in a
 * channel addressed to the person who asked) while Slack allows it, else (no recipient known, or
 * after Slack refused a stream call) by editing
 * the placeholder with chat.update, at most one edit per 1200 ms across the workspace (Tier 3)
 * and per reply. Finals are split at 4000 characters and each part rendered to mrkdwn on its own
 * (`render.ts`; a code block cut by the split is reopened in the next part). A 429 blocks the
 * workspace for Retry-After; a final waits it out unless it is over `maxRetryAfterMs`.
 */
export function createSlackEgress(options: SlackEgressOptions): ChannelEgress {
  return {
    reply(target: ReplyTarget): Reply {
      const { channel, threadTs } = threadOf(target);
      const phase: ReplyPhase = { isFinal: false, requeue: () => undefined };
      const primitives = slackEditPrimitives({ ...options, channel, threadTs, phase });
      const editReply = (placeholderId: string | undefined): Reply =>
        createEditReply(primitives, {
          placeholderId,
          maxChars: SLACK_LIMITS.maxMessageChars,
          minEditIntervalMs: SLACK_LIMITS.workspaceUpdateIntervalMs,
          // Partials wait for the workspace's gate and update budget; the primitives check again.
          gate: new ReplyGate({ shared: options.gate, budget: options.updateBudget, isFinal: () => phase.isFinal, now: options.now }),
          gateKey: `${channel}:${threadTs ?? ''}`,
          now: options.now,
          logger: options.logger,
          finalAttempts: FINAL_ATTEMPTS,
          platform: 'slack',
        });
      // In a channel Slack streams to one person, so it needs to know who asked.
      const recipient = target.recipient && { userId: target.recipient.userId, ...(target.recipient.workspaceId === undefined ? {} : { teamId: target.recipient.workspaceId }) };
      const canStream = (target.isPrivateChat || recipient !== undefined) && threadTs !== undefined && options.native.isAvailable();
      const inner: Reply = canStream
        ? new SlackStreamReply({ ...options, channel, threadTs, placeholderTs: target.replyTo.placeholderId, recipient, editReply })
        : editReply(target.replyTo.placeholderId);
      return withReactions(inner, phase, { ...options, channel, messageTs: target.replyTo.messageId });
    },
  };
}

/** Sets the final reaction: ✗ when delivery failed or the run did, ✓ when the caller said it succeeded. */
function withReactions(inner: Reply, phase: ReplyPhase, options: { api: SlackApi; logger: Logger; channel: string; messageTs: string | undefined }): Reply {
  const react = (name: string): Promise<void> =>
    options.messageTs === undefined
      ? Promise.resolve()
      : options.api.addReaction(options.channel, options.messageTs, name).catch((error: unknown) => {
          options.logger.debug({ channel: options.channel, err: describeError(error) }, 'Slack reaction not added');
        });
  let latest: string | undefined;
  // A partial dropped for the budget or a 429 comes back once the wait is over, unless a newer one did.
  phase.requeue = () => {
    // After the current request settles: the reply counts it as in flight until then.
    queueMicrotask(() => {
      if (!phase.isFinal && latest !== undefined) inner.update(latest);
    });
  };
  return {
    update: (text) => {
      latest = text;
      inner.update(text);
    },
    abandon: () => {
      phase.isFinal = true;
      inner.abandon?.();
    },
    async finish(text, outcome) {
      phase.isFinal = true;
      try {
        await inner.finish(text);
      } catch (error) {
        await react(SLACK_REACTIONS.failed);
        throw error;
      }
      // Without an outcome (a caller that does not know) there is no verdict to show.
      if (outcome !== undefined) await react(outcome.failed ? SLACK_REACTIONS.failed : SLACK_REACTIONS.succeeded);
    },
    ...(inner.resumeAnchor === undefined ? {} : { resumeAnchor: inner.resumeAnchor.bind(inner) }),
    // In the thread, after the last part; the person's message keeps the ✓ / ✗ reaction.
    ...(inner.finalLeft === undefined ? {} : { finalLeft: () => continuedUnder(inner.finalLeft?.(), options.messageTs) }),
  };
}

/** Shared by one reply's parts. */
interface ReplyPhase {
  /** Set once `finish` began: finals wait for the gate, partials give way. */
  isFinal: boolean;
  /** Queues the latest partial again (after one was dropped for a rate limit). */
  requeue(): void;
}

interface PrimitiveOptions extends SlackEgressOptions {
  channel: string;
  threadTs: string | undefined;
  phase: ReplyPhase;
}

/**
 * chat.postMessage / chat.update for `createEditReply`. Partials never wait here (the reply's
 * `ReplyGate` already held them): when another reply took the slot meanwhile, or the workspace
 * is blocked, they fail as rate limited and the latest partial is queued again, so it shows
 * once the wait is over (unless a newer one came). Finals wait for the gate and take a budget
 * slot regardless; past `maxRetryAfterMs` of waiting they fail instead.
 */
export function slackEditPrimitives(options: PrimitiveOptions): EditPrimitives {
  const { api, gate, updateBudget, channel, threadTs, phase, now } = options;
  const admit = async (usesBudget: boolean): Promise<void> => {
    if (phase.isFinal) {
      const until = gate.blockedUntil(WORKSPACE_KEY);
      if (until !== undefined && until - now() > SLACK_LIMITS.maxRetryAfterMs) {
        throw new ChannelError('slack', 'CHANNEL_UNAVAILABLE', 'Slack asked to wait longer than the adapter waits for a final');
      }
      await gate.waitUntilOpen(WORKSPACE_KEY);
      if (usesBudget) updateBudget.take(WORKSPACE_KEY);
      return;
    }
    const waitMs = Math.max((gate.blockedUntil(WORKSPACE_KEY) ?? now()) - now(), usesBudget ? updateBudget.waitMs(WORKSPACE_KEY) : 0);
    if (waitMs > 0) {
      phase.requeue();
      throw new ChannelError('slack', 'CHANNEL_RATE_LIMITED', 'Slack workspace budget spent', { retryAfterMs: waitMs });
    }
    if (usesBudget) updateBudget.take(WORKSPACE_KEY);
  };
  const blockOnLimit = (error: unknown): never => {
    if (error instanceof ChannelError && error.retryAfterMs !== undefined) {
      gate.block(WORKSPACE_KEY, error.retryAfterMs);
      phase.requeue();
    }
    throw error;
  };
  // A final split into parts cuts its Markdown where it must, at times inside a code block: the
  // walker closes the block at the end of that part, and the next part reopens it with its fence.
  let reopenedFence: string | undefined;
  const render = (text: string): { mrkdwn: string; delivered: () => void } => {
    if (!phase.isFinal) return { mrkdwn: renderMrkdwn(text), delivered: () => undefined };
    const markdown = reopenedFence === undefined ? text : `${reopenedFence}\n${text}`;
    return { mrkdwn: renderMrkdwn(markdown), delivered: () => (reopenedFence = openCodeFence(markdown)) };
  };
  return {
    async send(text) {
      await admit(false);
      const part = render(text);
      const ts = await api.postMessage(channel, part.mrkdwn, threadTs).catch(blockOnLimit);
      part.delivered();
      return ts;
    },
    async edit(messageId, text) {
      await admit(true);
      const part = render(text);
      await api.updateMessage(channel, messageId, part.mrkdwn).catch(blockOnLimit);
      part.delivered();
    },
    async remove(messageId) {
      await admit(false);
      await api.deleteMessage(channel, messageId).catch(blockOnLimit);
    },
  };
}

