import type { ChannelStateStore } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';

/**
 * Which running cards are CardKit card entities, by the message id that shows them (the reply's
 * placeholder). Kept in memory and, so another process can stream into it, in the channel's
 * durable state (`card:<message_id>` → card_id).
 */
export class CardRegistry {
  private readonly byMessage = new Map<string, string>();

  constructor(
    private readonly state: ChannelStateStore,
    private readonly logger: Logger,
  ) {}

  remember(messageId: string, cardId: string): void {
    this.byMessage.set(messageId, cardId);
    this.state.set(`card:${messageId}`, cardId).catch((error: unknown) => {
      this.logger.debug({ err: describeError(error) }, 'Feishu card id not stored');
    });
  }

  /** Known in this process only; for choosing the update interval at once. */
  cardOf(messageId: string): string | undefined {
    return this.byMessage.get(messageId);
  }

  async lookup(messageId: string): Promise<string | undefined> {
    const known = this.byMessage.get(messageId);
    if (known !== undefined) return known;
    const stored = await this.state.get(`card:${messageId}`).catch(() => undefined);
    return typeof stored === 'string' ? stored : undefined;
  }

  forget(messageId: string): void {
    this.byMessage.delete(messageId);
    this.state.delete(`card:${messageId}`).catch(() => undefined);
  }
}
