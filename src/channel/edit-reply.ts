import { ChannelError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RateGate } from './rate-gate.js';
import { splitText, truncateText } from './split.js';
import type { FinalLeft, Reply, ReplyAnchor } from './types.js';

/**
 * The two platform calls an edit-style reply needs. Both reject with a `ChannelError`
 * (`retryAfterMs` set when the platform asked us to wait).
 */
export interface EditPrimitives {
  /** Posts a new message, as a reply to `replyToMessageId` when given; resolves with its id. */
  send(text: string, replyToMessageId?: string): Promise<string>;
  /**
   * Replaces the text of message `messageId`. Must resolve when the platform reports the text
   * is already identical (Telegram's "message is not modified").
   */
  edit(messageId: string, text: string): Promise<void>;
  /**
   * Deletes message `messageId`. Where the platform can, a stream message the final could not
   * replace is removed, so no stale partial or placeholder stays above the final.
   */
  remove?(messageId: string): Promise<void>;
}

export interface EditReplyOptions {
  /** A message ingress already posted; the first update and the final edit it. */
  placeholderId?: string;
  /** The user's message: new messages without an earlier bot message reply to it. */
  replyToMessageId?: string;
  /** Longest text one message may hold; partials are truncated to it, the final is split. */
  maxChars: number;
  /** Minimum time between the end of one request and the start of the next. */
  minEditIntervalMs: number;
  /** Shared per-chat block set on rate limits; nothing goes to `gateKey` while it is closed. */
  gate: RateGate;
  gateKey: string;
  /** Milliseconds since the epoch. */
  now: () => number;
  logger: Logger;
  /** Tries per final request while the platform keeps answering with a rate limit; default 5. */
  finalAttempts?: number;
  /** Platform name for errors that did not arrive as a `ChannelError`; default `unknown`. */
  platform?: string;
  /**
   * The longest a final waits for a rate limit within the turn. A longer `retry_after` rejects at
   * once (with `retryAfterMs` set), so the outbox sends the final when the platform allows and
   * no worker sits idle meanwhile. Default: no cap.
   */
  maxFinalWaitMs?: number;
}

const DEFAULT_FINAL_ATTEMPTS = 5;

function isBlank(text: string): boolean {
  return text.trim().length === 0;
}

/**
 * One reply in the 'edit' streaming style: a message that is edited in place while the model
 * writes, then replaced by the final text.
 *
 * - `update(text)` returns at once. Only the latest text is kept; at most one request is in
 *   flight; requests are spaced `minEditIntervalMs` apart; unchanged and blank text is skipped;
 *   text over `maxChars` is cut to `maxChars - 1` units plus `…`. Without a placeholder the first
 *   update posts a new message (replying to `replyToMessageId`) and later ones edit it.
 * - A rate-limit error blocks the gate for `retryAfterMs` and drops that partial. Any other
 *   failed edit makes later partials go to a newly posted message.
 * - `finish(text)` waits for the request in flight, drops pending partials, splits `text`, edits
 *   the stream message (or placeholder) with chunk 1 unless it already shows it, falls back to
 *   posting chunk 1 when that edit fails (and then removes the message it could not edit, where
 *   the platform can), and posts the rest, each replying to the previous bot
 *   message, without waiting for the edit spacing (the final is delivered at once). Rate limits
 *   are waited out, up to `finalAttempts` tries per request and none longer than
 *   `maxFinalWaitMs`; then it
 *   rejects with the last `ChannelError`. Blank final text delivers nothing. Later calls return
 *   the first call's promise.
 * - `finalLeft()`, once parts of a final are on screen: the text from the first part not shown
 *   on, continuing after the last part shown (`{ messageId: <its id> }`, no placeholder), so a
 *   later attempt sends it as new messages replying to that part and edits nothing shown.
 *
 * Never logs message text.
 */
export function createEditReply(primitives: EditPrimitives, options: EditReplyOptions): Reply & Required<Pick<Reply, 'abandon' | 'resumeAnchor' | 'finalLeft'>> {
  return new EditReply(primitives, options);
}

/**
 * `left` (an edit-style reply's `finalLeft()`) continued under `messageId`, the message the reply
 * answers, instead of as a reply to the last part shown. For platforms where new messages follow
 * one another without replying to each other (a Slack thread, a DingTalk conversation), or where
 * that message id also says where reactions or the session webhook go (Slack, Feishu, DingTalk).
 * The rest is still sent as new messages after the last part: the anchor has no placeholder.
 */
export function continuedUnder(left: FinalLeft | undefined, messageId: string | undefined): FinalLeft | undefined {
  return left && { text: left.text, anchor: messageId === undefined ? {} : { messageId } };
}

class EditReply implements Reply {
  /** The message partials edit: the placeholder, then whatever the first send created. */
  private target: string | undefined;
  /** What `target` is known to show; `undefined` for a placeholder's own text. */
  private shown: string | undefined;
  private lastRequestEndAt: number | undefined;
  private pending: string | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private finishing: Promise<void> | undefined;
  /** Of the final: the last part on screen and the text after it. */
  private finalShown: { messageId: string; left: string } | undefined;
  private readonly finalAttempts: number;

  constructor(
    private readonly primitives: EditPrimitives,
    private readonly options: EditReplyOptions,
  ) {
    this.target = options.placeholderId;
    // The placeholder went out at admission, as a rule moments before the reply opens: the first
    // edit keeps the platform's spacing from it too. A model that answers within one interval then costs one edit (the
    // final) instead of two, and the first partial shows more than a word.
    if (options.placeholderId !== undefined) this.lastRequestEndAt = options.now();
    this.finalAttempts = Math.max(1, options.finalAttempts ?? DEFAULT_FINAL_ATTEMPTS);
  }

  update(text: string): void {
    if (this.finishing) return;
    this.pending = text;
    this.pump();
  }

  finish(text: string): Promise<void> {
    this.finishing ??= this.deliverFinal(text);
    return this.finishing;
  }

  abandon(): void {
    this.finishing ??= Promise.resolve();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
  }

  resumeAnchor(): ReplyAnchor {
    const { replyToMessageId } = this.options;
    return {
      ...(replyToMessageId === undefined ? {} : { messageId: replyToMessageId }),
      ...(this.target === undefined ? {} : { placeholderId: this.target }),
    };
  }

  finalLeft(): FinalLeft | undefined {
    const shown = this.finalShown;
    return shown && { text: shown.left, anchor: { messageId: shown.messageId } };
  }

  /** Starts the next partial request if one is due, or arms a timer for when it will be. */
  private pump(): void {
    if (this.finishing || this.inFlight || this.timer || this.pending === undefined) return;
    const waitMs = Math.max(this.gateWaitMs(), this.intervalWaitMs());
    if (waitMs > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, waitMs);
      return;
    }
    const text = truncateText(this.pending, this.options.maxChars);
    this.pending = undefined;
    if (text === this.shown || isBlank(text)) return;
    this.inFlight = this.sendPartial(text).finally(() => {
      this.inFlight = undefined;
      this.pump();
    });
  }

  private gateWaitMs(): number {
    const until = this.options.gate.blockedUntil(this.options.gateKey);
    return until === undefined ? 0 : until - this.options.now();
  }

  private intervalWaitMs(): number {
    if (this.lastRequestEndAt === undefined) return 0;
    return this.lastRequestEndAt + this.options.minEditIntervalMs - this.options.now();
  }

  /** Never rejects: a partial that fails is dropped. */
  private async sendPartial(text: string): Promise<void> {
    const target = this.target;
    try {
      if (target === undefined) {
        this.target = await this.primitives.send(text, this.options.replyToMessageId);
      } else {
        await this.primitives.edit(target, text);
      }
      this.shown = text;
    } catch (error) {
      this.onPartialError(error, target !== undefined);
    } finally {
      this.lastRequestEndAt = this.options.now();
    }
  }

  private onPartialError(error: unknown, wasEdit: boolean): void {
    const { gateKey, logger } = this.options;
    if (error instanceof ChannelError && error.retryAfterMs !== undefined) {
      this.options.gate.block(gateKey, error.retryAfterMs);
      logger.warn({ gateKey, retryAfterMs: error.retryAfterMs }, 'reply rate limited; partial update dropped');
      return;
    }
    if (wasEdit) {
      // The message may be gone or no longer editable: stream into a fresh one instead.
      this.target = undefined;
      this.shown = undefined;
    }
    logger.warn({ gateKey, err: describeError(error), wasEdit }, 'partial reply update failed');
  }

  private async deliverFinal(text: string): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    while (this.inFlight) await this.inFlight;
    if (isBlank(text)) {
      this.options.logger.debug({ gateKey: this.options.gateKey }, 'blank final reply; nothing delivered');
      return;
    }
    let previous: string | undefined;
    // The chunks join to `text` exactly (splitText), so each ends where the next begins.
    let end = 0;
    for (const chunk of splitText(text, this.options.maxChars)) {
      const replyTo = previous;
      previous =
        replyTo === undefined ? await this.deliverFirstChunk(chunk) : await this.withRetries(() => this.primitives.send(chunk, replyTo));
      end += chunk.length;
      this.finalShown = { messageId: previous, left: text.slice(end) };
    }
  }

  /** Resolves with the id of the message that now shows `chunk`. */
  private async deliverFirstChunk(chunk: string): Promise<string> {
    const target = this.target;
    const { replyToMessageId } = this.options;
    if (target === undefined) return this.withRetries(() => this.primitives.send(chunk, replyToMessageId));
    if (chunk === this.shown) return target;
    try {
      await this.withRetries(() => this.primitives.edit(target, chunk));
      this.shown = chunk;
      return target;
    } catch (error) {
      if (error instanceof ChannelError && error.retryAfterMs !== undefined) throw error;
      this.options.logger.warn(
        { gateKey: this.options.gateKey, err: describeError(error) },
        'final edit failed; sending the final reply as a new message',
      );
      const sent = await this.withRetries(() => this.primitives.send(chunk, replyToMessageId));
      this.target = sent;
      this.shown = chunk;
      await this.removeStale(target);
      return sent;
    }
  }

  /** Best effort: the stream message the final replaced goes, so only the final shows (issue #15). */
  private async removeStale(messageId: string): Promise<void> {
    const { remove } = this.primitives;
    if (!remove) return;
    await remove(messageId).catch((error: unknown) =>
      this.options.logger.warn({ gateKey: this.options.gateKey, err: describeError(error) }, 'stale stream message could not be removed'),
    );
  }

  /** Runs `request` once the gate is open, retrying while it is rate limited. */
  private async withRetries<T>(request: () => Promise<T>): Promise<T> {
    const { gate, gateKey, logger } = this.options;
    let lastError: ChannelError | undefined;
    for (let attempt = 1; attempt <= this.finalAttempts; attempt++) {
      this.refuseLongWait();
      // No edit spacing here: a final is one short burst, which platforms allow, and holding it
      // back would delay every answer by the interval. Only an actual rate limit makes it wait.
      await gate.waitUntilOpen(gateKey);
      try {
        return await request();
      } catch (error) {
        const channelError = this.asChannelError(error);
        if (channelError.retryAfterMs === undefined) throw channelError;
        gate.block(gateKey, channelError.retryAfterMs);
        lastError = channelError;
        logger.warn({ gateKey, attempt, retryAfterMs: channelError.retryAfterMs }, 'final reply rate limited; waiting');
      } finally {
        this.lastRequestEndAt = this.options.now();
      }
    }
    throw lastError;
  }

  /** Rejects when the gate stays closed longer than a final waits in the turn. */
  private refuseLongWait(): void {
    const { gate, gateKey, maxFinalWaitMs, now } = this.options;
    const until = gate.blockedUntil(gateKey);
    if (maxFinalWaitMs === undefined || until === undefined || until - now() <= maxFinalWaitMs) return;
    throw new ChannelError(this.options.platform ?? 'unknown', 'CHANNEL_RATE_LIMITED', 'rate limited for longer than a final waits in its turn', {
      retryAfterMs: until - now(),
    });
  }

  private asChannelError(error: unknown): ChannelError {
    if (error instanceof ChannelError) return error;
    return new ChannelError(this.options.platform ?? 'unknown', 'CHANNEL_UNAVAILABLE', 'reply delivery failed', {
      cause: error,
    });
  }
}
