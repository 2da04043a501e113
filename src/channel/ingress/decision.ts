import type { ChatBindRequest, InboundMessage, ReplyTarget } from '../types.js';

/** A message an adapter decided to pass on; core gives it its reply target and receipt time. */
export type PendingInbound = Omit<InboundMessage, 'replyTo' | 'receivedAt'>;

/** Why an event is ignored when its sender is not in the channel's `allowed_users` (logged at info, not debug). */
export const NOT_ALLOWED = 'not-allowed';

/**
 * What an adapter's decide step made of one platform event: plain data, so decide functions are
 * pure and table-tested, and core alone runs the steps that follow (claim, bind, reserve,
 * acknowledge, commit). `deliveryKey` names the delivery across the platform's retries and every
 * process (Slack: team, channel and ts), to claim it before anything is posted; absent where the
 * platform sends a message once (Telegram's polling), where the turn journal's dedupe at the
 * commit is enough and the claim's two statements would be spent for nothing.
 */
export type IngressDecision =
  /** Nothing for the bot: its own echo, another bot, an unaddressed group message, a sender not allowed. */
  | { kind: 'ignore'; reason: string }
  /** `/connect <code>` (reference §5.3): bind the sender, answer in `answerTo`. Before the allow-list. */
  | { kind: 'bind'; deliveryKey?: string; request: ChatBindRequest; answerTo: ReplyTarget }
  /** The adapter's own answer, without the agent (Telegram's `/start` welcome). */
  | { kind: 'answer'; text: string; answerTo: ReplyTarget }
  /** A message for the agent. */
  | { kind: 'forward'; deliveryKey?: string; message: PendingInbound };
