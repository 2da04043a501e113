import type { ChannelStateStore } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { DiscordApi } from './api.js';
import { DISCORD_ERROR_CODES, discordCodeOf } from './errors.js';

/**
 * Threads the bot opened, in the platform's durable state (`ChannelDeps.state`), so every
 * process and every restart knows them: `message:<channelId>:<messageId>` → thread id (the
 * thread a channel message got), and `thread:<threadId>` → where it came from (how ingress knows
 * a thread is ours and answers there without a mention).
 */
export class ThreadMap {
  constructor(
    private readonly state: ChannelStateStore,
    private readonly api: DiscordApi,
    private readonly logger: Logger,
  ) {}

  /** Whether the bot opened thread `threadId`. Rejects when the state store cannot be read. */
  async isOwnThread(threadId: string): Promise<boolean> {
    return (await this.state.get(threadKey(threadId))) !== undefined;
  }

  /**
   * The thread for `messageId` in `channelId`: the one already recorded (a redelivery, another
   * process), else a new one named `name`. Two racing callers agree on one thread
   * (`setIfAbsent`; Discord itself refuses a second thread for a message with 160004, and the
   * thread id is the message id). Resolves `undefined` when no thread can be made (a channel
   * type without threads, missing permissions): the caller answers in the channel.
   */
  async threadFor(channelId: string, messageId: string, name: string): Promise<string | undefined> {
    const key = messageKey(channelId, messageId);
    const known = await this.state.get(key);
    if (typeof known === 'string') return known;
    let created: string;
    try {
      created = await this.api.startThread(channelId, messageId, name);
    } catch (error) {
      if (discordCodeOf(error) !== DISCORD_ERROR_CODES.threadAlreadyCreated) {
        this.logger.warn({ channelId, messageId, err: describeError(error) }, 'Discord thread not created; answering in the channel');
        return undefined;
      }
      created = messageId;
    }
    const stored = await this.state.setIfAbsent(key, created);
    const threadId = typeof stored === 'string' ? stored : created;
    await this.state.set(threadKey(threadId), { channelId, messageId });
    return threadId;
  }
}

function messageKey(channelId: string, messageId: string): string {
  return `message:${channelId}:${messageId}`;
}

function threadKey(threadId: string): string {
  return `thread:${threadId}`;
}
