import type { ChannelCapabilities, ChannelEgress, CommandInfo, InboundMessage, Reply, ReplyTarget } from '../channel/types.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type AgentRuntime, LEAD_AGENT_ID, type RunRequest } from '../runtime/types.js';
import { builtinCommands, type Command, parseCommand } from './commands/index.js';
import { type DedupeKey, type DedupeStore, dedupeKeyOf } from './dedupe.js';
import { MESSAGES } from './messages.js';
import { extractFinalText } from './response.js';
import { StreamText, UpdateThrottle } from './stream-text.js';
import type { ThreadResolver } from './threads.js';
import { safeUserId } from './user-id.js';

/** What the manager needs of a running channel: how to answer and how the platform behaves. */
export interface ChannelHandle {
  egress: ChannelEgress;
  capabilities: ChannelCapabilities;
}

export interface ChannelManagerDeps {
  runtime: AgentRuntime;
  threads: ThreadResolver;
  dedupe: DedupeStore;
  /** Looks a channel up by name; undefined when it is not running in this process. */
  channel: (name: string) => ChannelHandle | undefined;
  logger: Logger;
  now?: () => number;
  commands?: readonly Command[];
}

/** How one chat turn ended, for deciding whether a redelivery may retry. */
interface TurnOutcome {
  failed: boolean;
}

/**
 * Turns an inbound message into an answer, knowing no platform: dedupe, commands, the thread
 * map, and the run mode the channel's capabilities ask for (reference §4).
 */
export class ChannelManager {
  readonly commands: readonly Command[];
  private readonly now: () => number;

  constructor(private readonly deps: ChannelManagerDeps) {
    this.commands = deps.commands ?? builtinCommands;
    this.now = deps.now ?? Date.now;
  }

  /** The commands ingress should classify as commands, with their descriptions. */
  commandInfo(): CommandInfo[] {
    return this.commands.map(({ name, description }) => ({ name, description }));
  }

  /** The bus worker's handler: never throws. */
  async handle(message: InboundMessage, signal: AbortSignal): Promise<void> {
    const log = this.deps.logger.child({ channel: message.channel, chatId: message.chatId, messageId: message.messageId });
    const channel = this.deps.channel(message.channel);
    if (!channel) {
      log.error('message for a channel that is not running here; dropped');
      return;
    }
    const key = dedupeKeyOf(message);
    if (key && !(await this.acquire(key, log))) {
      log.info('duplicate delivery dropped');
      return;
    }
    log.info({ kind: message.kind, chars: message.text.length }, 'inbound accepted');
    let reply: Reply | undefined;
    try {
      reply = channel.egress.reply(replyTargetOf(message));
      const outcome =
        message.kind === 'command'
          ? await this.handleCommand(message, reply, channel.capabilities, signal)
          : await this.handleChat(message, message.text, reply, channel.capabilities, signal);
      if (outcome.failed && key) await this.release(key, log);
    } catch (error) {
      log.error({ err: describeError(error) }, 'handling failed');
      if (key) await this.release(key, log);
      await reply
        ?.finish(MESSAGES.internalError)
        .catch((e: unknown) => log.warn({ err: describeError(e) }, 'could not deliver the error reply'));
    }
  }

  private async handleCommand(
    message: InboundMessage,
    reply: Reply,
    capabilities: ChannelCapabilities,
    signal: AbortSignal,
  ): Promise<TurnOutcome> {
    const parsed = parseCommand(message.text);
    const command = parsed.isWellFormed ? this.commands.find((c) => c.name === parsed.name) : undefined;
    if (!command) {
      const available = this.commands.map((c) => c.name).sort();
      await reply.finish(MESSAGES.unknownCommand(parsed.name, available));
      return { failed: false };
    }
    const result = await command.run({
      message,
      args: parsed.args,
      threads: this.deps.threads,
      runtime: this.deps.runtime,
      commands: this.commands,
    });
    if ('reply' in result) {
      await reply.finish(result.reply);
      return { failed: false };
    }
    return this.handleChat(message, result.runAsChat.text, reply, capabilities, signal, result.runAsChat.context);
  }

  private async handleChat(
    message: InboundMessage,
    text: string,
    reply: Reply,
    capabilities: ChannelCapabilities,
    signal: AbortSignal,
    extraContext: Record<string, unknown> = {},
  ): Promise<TurnOutcome> {
    if (text.trim() === '') {
      await reply.finish(MESSAGES.emptyMessage);
      return { failed: false };
    }
    const threadId = await this.deps.threads.resolve(message);
    const request = this.runRequest(message, threadId, text, extraContext);
    try {
      switch (capabilities.runMode) {
        case 'stream':
          return await this.streamTurn(threadId, request, reply, signal);
        case 'wait':
          return await this.waitTurn(threadId, request, reply, signal);
        case 'fire_and_forget':
          await this.deps.runtime.createRun(threadId, request);
          return { failed: false };
      }
    } catch (error) {
      if (isRefusal(error)) {
        await reply.finish(error.code === 'THREAD_BUSY' ? MESSAGES.threadBusy : (error.userMessage ?? MESSAGES.internalError));
        return { failed: true };
      }
      throw error;
    }
  }

  /** Reference §4.7 A: partials as the model writes, exactly one final, even on error. */
  private async streamTurn(threadId: string, request: RunRequest, reply: Reply, signal: AbortSignal): Promise<TurnOutcome> {
    const { events } = await this.deps.runtime.streamRun(
      threadId,
      { ...request, stream_mode: ['messages-tuple', 'values'] },
      { signal },
    );
    const streamed = new StreamText();
    const throttle = new UpdateThrottle(this.now);
    let lastValues: unknown;
    let failed = false;
    let runError: RunErrorPart | undefined;
    try {
      for await (const part of events) {
        if (part.event === 'messages' || part.event === 'messages-tuple') {
          if (streamed.accept(part.data) && throttle.shouldPublish(streamed.text)) {
            reply.update(streamed.text + MESSAGES.streamingCursor);
          }
        } else if (part.event === 'values') {
          lastValues = part.data;
        } else if (part.event === 'error') {
          failed = true;
          runError = part.data as RunErrorPart;
        }
      }
    } catch (error) {
      failed = true;
      this.deps.logger.warn({ threadId, err: describeError(error) }, 'run stream broke');
    }
    const finalText = !failed
      ? extractFinalText(lastValues) || streamed.text || MESSAGES.emptyReply
      : signal.aborted
        ? streamed.text
          ? MESSAGES.cutShort(streamed.text)
          : MESSAGES.shuttingDown
        : runError?.error === 'RECURSION_LIMIT' && runError.message
          ? withNotice(streamed.text, runError.message)
          : streamed.text || MESSAGES.streamError;
    await reply.finish(finalText);
    return { failed };
  }

  private async waitTurn(threadId: string, request: RunRequest, reply: Reply, signal: AbortSignal): Promise<TurnOutcome> {
    try {
      const { values } = await this.deps.runtime.waitRun(threadId, request, { signal });
      await reply.finish(extractFinalText(values) || MESSAGES.emptyReply);
      return { failed: false };
    } catch (error) {
      if (isRefusal(error)) throw error;
      this.deps.logger.warn({ threadId, err: describeError(error) }, 'run failed');
      const notice = error instanceof AppError && error.code === 'RECURSION_LIMIT' ? error.userMessage : undefined;
      await reply.finish(signal.aborted ? MESSAGES.shuttingDown : (notice ?? MESSAGES.streamError));
      return { failed: true };
    }
  }

  private runRequest(message: InboundMessage, threadId: string, text: string, extraContext: Record<string, unknown>): RunRequest {
    return {
      assistant_id: LEAD_AGENT_ID,
      input: { messages: [{ role: 'human', content: text }] },
      multitask_strategy: 'reject',
      config: { recursion_limit: 100 },
      context: {
        thread_id: threadId,
        channel_name: message.channel,
        user_id: safeUserId(message.userId),
        channel_user_id: message.userId,
        trusted_sender: message.senderIsAllowlisted === true,
        ...extraContext,
      },
    };
  }

  private async acquire(key: DedupeKey, log: Logger): Promise<boolean> {
    try {
      return await this.deps.dedupe.acquire(key);
    } catch (error) {
      // Fail open: answering twice beats never answering.
      log.warn({ err: describeError(error) }, 'dedupe store unavailable; processing anyway');
      return true;
    }
  }

  private async release(key: DedupeKey, log: Logger): Promise<void> {
    await this.deps.dedupe.release(key).catch((error: unknown) => log.warn({ err: describeError(error) }, 'could not release dedupe key'));
  }
}

/** The data of a run stream's `error` event. */
interface RunErrorPart {
  error?: string;
  message?: string;
}

/** Partial text the user already saw, then why it stopped. */
function withNotice(partial: string, notice: string): string {
  return partial === '' ? notice : `${partial}\n\n${notice}`;
}

/** Refused before the run started: the thread is busy, or no model exists. */
function isRefusal(error: unknown): error is AppError {
  return error instanceof AppError && (error.code === 'THREAD_BUSY' || error.code === 'MODEL_NOT_CONFIGURED');
}

function replyTargetOf(message: InboundMessage): ReplyTarget {
  return {
    chatId: message.chatId,
    ...(message.topicId === undefined ? {} : { topicId: message.topicId }),
    isPrivateChat: message.isPrivateChat,
    replyTo: message.replyTo,
  };
}
