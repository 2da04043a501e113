import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { DISCORD_LIMITS } from './limits.js';

export interface TypingOptions {
  /** One "typing" request; rejects with a `ChannelError`. */
  trigger: (channelId: string) => Promise<void>;
  logger: Logger;
  renewMs?: number;
  maxMs?: number;
}

/**
 * "<bot> is typing…" per channel, from the acknowledgement until the first message of the reply
 * (reference §6.3): renewed every `renewMs` (Discord shows it for 10 s), given up after `maxMs`.
 * Best effort: a failed request is logged and the indicator stops. Posting a message ends
 * Discord's indicator by itself, so `stop` only ends the renewals.
 */
export class TypingIndicators {
  private readonly timers = new Map<string, { interval: ReturnType<typeof setInterval>; deadline: ReturnType<typeof setTimeout> }>();

  constructor(private readonly options: TypingOptions) {}

  start(channelId: string): void {
    if (this.timers.has(channelId)) return;
    const renewMs = this.options.renewMs ?? DISCORD_LIMITS.typingRenewMs;
    const interval = setInterval(() => this.trigger(channelId), renewMs);
    const deadline = setTimeout(() => this.stop(channelId), this.options.maxMs ?? DISCORD_LIMITS.maxTypingMs);
    interval.unref();
    deadline.unref();
    this.timers.set(channelId, { interval, deadline });
    this.trigger(channelId);
  }

  stop(channelId: string): void {
    const timers = this.timers.get(channelId);
    if (!timers) return;
    clearInterval(timers.interval);
    clearTimeout(timers.deadline);
    this.timers.delete(channelId);
  }

  stopAll(): void {
    for (const channelId of [...this.timers.keys()]) this.stop(channelId);
  }

  isTyping(channelId: string): boolean {
    return this.timers.has(channelId);
  }

  private trigger(channelId: string): void {
    this.options.trigger(channelId).catch((error: unknown) => {
      this.options.logger.debug({ channelId, err: describeError(error) }, 'Discord typing indicator not shown');
      this.stop(channelId);
    });
  }
}
