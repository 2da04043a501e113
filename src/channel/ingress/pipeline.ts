import { AppError, describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { isDuplicateDelivery } from '../journaled-intake.js';
import type { ChannelDeps, InboundReservation, ReplyTarget } from '../types.js';
import { type IngressDecision, NOT_ALLOWED, type PendingInbound } from './decision.js';

/** What the pipeline says to people by itself. */
export const INGRESS_TEXTS = {
  busy: 'The server is too busy to take your message right now. Please send it again in a moment.',
} as const;

/** What an adapter brings to the pipeline besides its decide function: its acknowledgement and how it answers. */
export interface IngressAdapter {
  /** Platform name, for the delivery records. */
  platform: string;
  /** Posts a short text in answer (the binder's answer, the busy notice). Rejects when it could not. */
  say(target: ReplyTarget, text: string): Promise<void>;
  /**
   * Shows the person their message was taken (a placeholder the reply edits, reactions, a typing
   * indicator). Resolves with the placeholder's id when it posted one. Never rejects.
   */
  acknowledge(message: PendingInbound): Promise<string | undefined>;
  /**
   * Takes back an acknowledgement nobody will answer (the commit failed, or it was a duplicate):
   * the placeholder when there is one, a typing indicator. Never rejects.
   */
  withdraw?(message: PendingInbound, placeholderId: string | undefined): Promise<void>;
  /** Settles what depends on the message holding a place in the intake (Feishu: which group topic it joins). */
  place?(message: PendingInbound): Promise<PendingInbound>;
  /**
   * A message the intake refused (full, closing, the queue unreachable): `redeliver` when the
   * transport then leaves it unacknowledged, so the platform offers it again; `tell` when the
   * platform will not, so the person is asked to send it again.
   */
  refusal: 'redeliver' | 'tell';
}

/**
 * How admission ended. `refused`: the intake could not take it; with `redeliver` the transport
 * must not acknowledge it. Every other outcome is settled and may be acknowledged.
 */
export type IngressOutcome = 'accepted' | 'bound' | 'answered' | 'ignored' | 'duplicate' | 'refused';

/**
 * A message's claim still unsettled after this long belonged to a process that died while
 * admitting it: a redelivery then runs. Admission takes a few requests (the placeholder, the
 * commit); a live one that took longer still answers once, since the journal refuses the
 * second commit.
 */
export const MESSAGE_CLAIM_STALE_MS = 60_000;

/** Refusals are logged at most this often per adapter: a full queue refuses in bursts. */
const REFUSAL_LOG_INTERVAL_MS = 1000;

/**
 * One admission order for every platform (issue #15): decide (the adapter's), claim the delivery,
 * bind, reserve a place in the intake, acknowledge, commit; on a failure after the reservation
 * the place is given back and the placeholder withdrawn. One policy per failure:
 *
 * - the delivery store is down: admit anyway (the turn journal still dedupes at the commit);
 * - claimed before (a platform retry, or a second event for one message): nothing runs;
 * - the intake refuses or the commit fails: the claim is dropped so a redelivery runs, and the
 *   adapter's `refusal` says whether the platform redelivers or the person is told;
 * - the journal knows the message (a redelivery of one accepted before): a duplicate.
 *
 * Never logs message text or codes.
 */
export class IngressPipeline {
  private lastRefusalLogAt = Number.NEGATIVE_INFINITY;
  private refusalsUnlogged = 0;

  constructor(
    private readonly adapter: IngressAdapter,
    private readonly deps: Pick<ChannelDeps, 'intake' | 'binder' | 'deliveries' | 'now'>,
    private readonly logger: Logger,
  ) {}

  /** Admits what `decision` says, for an event received at `receivedAt`. Rejects only on a bug. */
  async admit(decision: IngressDecision, receivedAt: number): Promise<IngressOutcome> {
    if (decision.kind === 'ignore') {
      this.logger[decision.reason === NOT_ALLOWED ? 'info' : 'debug']({ reason: decision.reason }, 'inbound event ignored');
      return 'ignored';
    }
    if (decision.kind === 'answer') {
      await this.adapter.say(decision.answerTo, decision.text).catch((error: unknown) => {
        this.logger.warn({ err: describeError(error) }, 'answer not delivered');
      });
      return 'answered';
    }
    let outcome: IngressOutcome = 'refused';
    const settled = await this.claimed(decision.deliveryKey, async () => {
      outcome = decision.kind === 'bind' ? await this.bind(decision) : await this.forward(decision.message, receivedAt);
      return outcome !== 'refused';
    });
    return settled === 'duplicate' ? 'duplicate' : outcome;
  }

  /**
   * Asked by a push transport before it acknowledges a message event (issue #15): true when the
   * intake has no room for it now and the platform will deliver it again (`willRedeliver`: Slack
   * before its last retry), so the transport refuses it (an HTTP 503, an envelope left
   * unacknowledged) and the message comes back, instead of the person being asked to send it
   * again. False when the intake has room or cannot tell: admission then decides, and a refusal
   * there is told. Never rejects.
   */
  async leavesForRedelivery(willRedeliver: boolean): Promise<boolean> {
    if (!willRedeliver || !this.deps.intake.hasRoom) return false;
    const hasRoom = await this.deps.intake.hasRoom().catch(() => true);
    if (hasRoom) return false;
    this.logRefusal(new AppError('INBOUND_QUEUE_FULL', 'inbound queue is full'), 'left for redelivery');
    return true;
  }

  /**
   * Runs `work` under the claim of `deliveryKey` (none without a key): once across redeliveries
   * and processes, recorded done when `work` resolves true and failed otherwise, so that a
   * redelivery runs again. Resolves with `work`'s result, or `duplicate` when claimed before.
   * `admit` claims through it; so does an event an adapter holds back before admitting it
   * (Feishu's lone files wait for their batch).
   */
  async claimed(deliveryKey: string | undefined, work: () => Promise<boolean>): Promise<boolean | 'duplicate'> {
    const claim = deliveryKey === undefined ? 'unclaimed' : await this.claim(deliveryKey);
    if (claim === 'taken') {
      this.logger.info('inbound message delivered again; already taken');
      return 'duplicate';
    }
    let isSettled = false;
    try {
      isSettled = await work();
      return isSettled;
    } finally {
      if (claim === 'new') await this.record(deliveryKey as string, isSettled);
    }
  }

  /**
   * Claims a delivery once across retries and processes. Fails open: with the store down,
   * answering twice beats never answering, and the journal refuses a second commit anyway.
   */
  private async claim(key: string): Promise<'new' | 'taken' | 'unrecorded'> {
    try {
      return (await this.deps.deliveries.begin(key, 'message', { staleAfterMs: MESSAGE_CLAIM_STALE_MS })).kind === 'new' ? 'new' : 'taken';
    } catch (error) {
      this.logger.warn({ err: describeError(error) }, 'delivery store unavailable; admitting anyway');
      return 'unrecorded';
    }
  }

  /** Marks the delivery done, or failed so that a redelivery runs again. Never rejects. */
  private async record(key: string, isDone: boolean): Promise<void> {
    const { deliveries } = this.deps;
    await (isDone ? deliveries.finish(key, {}) : deliveries.fail(key)).catch((error: unknown) => {
      this.logger.warn({ err: describeError(error) }, 'delivery outcome not recorded');
    });
  }

  private async bind(decision: Extract<IngressDecision, { kind: 'bind' }>): Promise<IngressOutcome> {
    const binder = this.deps.binder;
    if (!binder) return 'ignored';
    // The code stays out of logs: only the binder's answer is sent, and it never contains it.
    const answer = await binder.bind(this.adapter.platform, decision.request);
    await this.adapter.say(decision.answerTo, answer).catch((error: unknown) => {
      this.logger.warn({ err: describeError(error) }, 'bind answer not delivered');
    });
    return 'bound';
  }

  private async forward(message: PendingInbound, receivedAt: number): Promise<IngressOutcome> {
    let reservation: InboundReservation;
    try {
      reservation = await this.deps.intake.reserve();
    } catch (error) {
      return this.refuse(message, error);
    }
    let placed = message;
    let isAcknowledged = false;
    let placeholderId: string | undefined;
    try {
      placed = this.adapter.place ? await this.adapter.place(message) : message;
      isAcknowledged = true;
      placeholderId = await this.adapter.acknowledge(placed);
      await reservation.commit({
        ...placed,
        replyTo: { ...(placed.messageId === undefined ? {} : { messageId: placed.messageId }), ...(placeholderId === undefined ? {} : { placeholderId }) },
        receivedAt,
      });
      return 'accepted';
    } catch (error) {
      reservation.release();
      if (isAcknowledged) await this.adapter.withdraw?.(placed, placeholderId);
      if (isDuplicateDelivery(error)) {
        // A redelivery of a message accepted before: its turn answers in the first placeholder.
        this.logger.info('inbound message delivered again; already accepted');
        return 'duplicate';
      }
      return this.refuse(placed, error);
    }
  }

  /** The intake could not take `message`: the platform redelivers it, or the person is told. */
  private async refuse(message: PendingInbound, error: unknown): Promise<IngressOutcome> {
    this.logRefusal(error);
    if (this.adapter.refusal === 'tell') {
      await this.adapter.say(replyTargetOf(message), INGRESS_TEXTS.busy).catch((sayError: unknown) => {
        this.logger.warn({ err: describeError(sayError) }, 'busy notice not delivered');
      });
    }
    return 'refused';
  }

  private logRefusal(error: unknown, handling = this.adapter.refusal === 'tell' ? 'told' : 'left for redelivery'): void {
    const now = this.deps.now();
    if (now - this.lastRefusalLogAt < REFUSAL_LOG_INTERVAL_MS) {
      this.refusalsUnlogged++;
      return;
    }
    const refusedMeanwhile = this.refusalsUnlogged;
    this.lastRefusalLogAt = now;
    this.refusalsUnlogged = 0;
    this.logger.warn(
      { err: describeError(error), refusedMeanwhile, handling },
      'inbound message refused by the intake',
    );
  }
}

/** Where an answer to `message` goes: its chat and conversation, replying to it. */
export function replyTargetOf(message: PendingInbound): ReplyTarget {
  return {
    chatId: message.chatId,
    ...(message.topicId === undefined ? {} : { topicId: message.topicId }),
    isPrivateChat: message.isPrivateChat,
    replyTo: message.messageId === undefined ? {} : { messageId: message.messageId },
    ...(message.platformData === undefined ? {} : { platformData: message.platformData }),
  };
}
