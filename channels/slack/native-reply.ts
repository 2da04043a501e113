import type { IntervalBudget } from '../../src/channel/interval-budget.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { Reply } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { SlackApi } from './api.js';
import { WORKSPACE_KEY as KEY } from './budget.js';
import { slackErrorCode } from './errors.js';
import { SLACK_LIMITS } from './limits.js';
import { renderStreamingMarkdownText } from './render.js';

/**
 * Slack error codes meaning "this workspace or app cannot stream" (not: "this one stream
 * failed"): after one, every later reply edits instead. `not_allowed` and `unknown_method` per
 * the issue; `feature_not_enabled`/`method_deprecated`/`missing_scope` are the platform's words
 * for the same situation.
 */
const STREAMING_UNSUPPORTED = new Set(['not_allowed', 'unknown_method', 'feature_not_enabled', 'method_deprecated', 'missing_scope', 'not_allowed_token_type']);

/**
 * Undocumented (core's choice, `MESSAGES.streamingCursor` in the manager): partials end in ` ▉`.
 * A native stream cannot take appended text back, so the cursor is left out.
 */
const CURSOR = ' ▉';

/** Whether native streaming is still worth trying in this workspace; shared by all replies. */
export class NativeStreaming {
  private disabledReason: string | undefined;

  constructor(isEnabled: boolean) {
    if (!isEnabled) this.disabledReason = 'disabled by configuration';
  }

  isAvailable(): boolean {
    return this.disabledReason === undefined;
  }

  disable(reason: string): void {
    this.disabledReason ??= reason;
  }
}

export interface SlackStreamReplyOptions {
  api: SlackApi;
  channel: string;
  threadTs: string;
  placeholderTs: string | undefined;
  /** The person the stream is for; Slack needs it in channels. */
  recipient: { userId: string; teamId?: string } | undefined;
  gate: RateGate;
  /** Stream appends are Tier 4, shared by the workspace's streams. */
  appendBudget: IntervalBudget;
  native: NativeStreaming;
  logger: Logger;
  now: () => number;
  /** An edit-style reply of the same target, editing `placeholderId` (the fallback, and every final). */
  editReply(placeholderId: string | undefined): Reply;
}


/**
 * A reply streamed with chat.startStream / appendStream in the person's thread. The first
 * partial starts the stream and removes the placeholder; later partials append what is new
 * (latest wins; one request in flight; spaced by `streamAppendIntervalMs` and the workspace's
 * append budget). When Slack refuses a stream call for a reason other than a rate limit, the
 * reply goes on as an edit-style reply of the stream message (or of the placeholder, when no
 * stream started), handing it the latest text: nothing shown is lost. `finish` stops the stream
 * and makes the message show exactly the final text (split and rendered like every final).
 */
export class SlackStreamReply implements Reply {
  private streamTs: string | undefined;
  /** What the stream was sent so far (`markdown_text`, rendered). */
  private shown = '';
  private pending: string | undefined;
  /** The latest partial as core sent it (cursor included), for a fallback to pick up. */
  private latest: string | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastRequestEndAt: number | undefined;
  private fallback: Reply | undefined;
  private finishing: Promise<void> | undefined;

  constructor(private readonly options: SlackStreamReplyOptions) {}

  update(text: string): void {
    if (this.finishing) return;
    if (this.fallback) {
      this.fallback.update(text);
      return;
    }
    this.latest = text;
    // Rendered once, here: what may show of the partial now (`renderStreamingMarkdownText`).
    this.pending = renderStreamingMarkdownText(text.endsWith(CURSOR) ? text.slice(0, -CURSOR.length) : text);
    this.pump();
  }

  finish(text: string): Promise<void> {
    this.finishing ??= this.deliverFinal(text);
    return this.finishing;
  }

  abandon(): void {
    this.finishing ??= Promise.resolve();
    this.fallback?.abandon?.();
  }

  private pump(): void {
    if (this.finishing || this.fallback || this.inFlight || this.timer || this.pending === undefined) return;
    const { gate, appendBudget, now } = this.options;
    const intervalWait = this.lastRequestEndAt === undefined ? 0 : this.lastRequestEndAt + SLACK_LIMITS.streamAppendIntervalMs - now();
    const gateWait = (gate.blockedUntil(KEY) ?? now()) - now();
    const waitMs = Math.max(intervalWait, gateWait, appendBudget.waitMs(KEY));
    if (waitMs > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, waitMs);
      return;
    }
    const text = this.pending;
    this.pending = undefined;
    // Only growth can be streamed; anything else waits for the final, which replaces the text.
    if (text.trim() === '' || !text.startsWith(this.shown) || text === this.shown) return;
    appendBudget.take(KEY);
    this.inFlight = this.send(text).finally(() => {
      this.inFlight = undefined;
      this.lastRequestEndAt = this.options.now();
      this.pump();
    });
  }

  /** Never rejects. */
  private async send(text: string): Promise<void> {
    const { api, channel, threadTs } = this.options;
    const delta = text.slice(this.shown.length, this.shown.length + SLACK_LIMITS.maxStreamChars);
    try {
      if (this.streamTs === undefined) {
        this.streamTs = await api.startStream({ channel, threadTs, markdown: delta, recipient: this.options.recipient });
        await this.removePlaceholder();
      } else {
        await api.appendStream(channel, this.streamTs, delta);
      }
      this.shown += delta;
    } catch (error) {
      this.onError(error);
    }
  }

  private onError(error: unknown): void {
    const { gate, logger, native, placeholderTs } = this.options;
    if (error instanceof ChannelError && error.retryAfterMs !== undefined) {
      gate.block(KEY, error.retryAfterMs);
      logger.warn({ retryAfterMs: error.retryAfterMs }, 'Slack stream rate limited; partial dropped');
      return;
    }
    const slackError = slackErrorCode(error);
    if (slackError !== undefined && STREAMING_UNSUPPORTED.has(slackError)) native.disable(slackError);
    logger.warn({ err: describeError(error), hasStream: this.streamTs !== undefined }, 'Slack stream failed; editing instead');
    this.fallback = this.options.editReply(this.streamTs ?? placeholderTs);
    this.pending = undefined;
    if (this.latest !== undefined) this.fallback.update(this.latest);
  }

  /** The stream replaces the placeholder; a placeholder that stays is only cosmetic, so failures are logged. */
  private async removePlaceholder(): Promise<void> {
    const { api, channel, placeholderTs, logger } = this.options;
    if (placeholderTs === undefined) return;
    await api.deleteMessage(channel, placeholderTs).catch((error: unknown) => {
      logger.debug({ err: describeError(error) }, 'Slack placeholder not removed');
    });
  }

  private async deliverFinal(text: string): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    while (this.inFlight) await this.inFlight;
    if (this.fallback) return this.fallback.finish(text);
    const { api, channel, logger, placeholderTs } = this.options;
    if (this.streamTs !== undefined) {
      await api.stopStream(channel, this.streamTs).catch((error: unknown) => {
        logger.warn({ err: describeError(error) }, 'Slack stream not stopped');
      });
    }
    // A stopped stream is an ordinary message: the final edits it like any other.
    return this.options.editReply(this.streamTs ?? placeholderTs).finish(text);
  }
}
