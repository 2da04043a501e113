import type { ChannelDeps, ChatBindRequest, InboundMessage, ReplyTarget } from '../types.js';

/** A message an adapter decided to pass on; core gives it its reply target and receipt time. */
export type PendingInbound = Omit<InboundMessage, 'replyTo' | 'receivedAt'>;

/** Why an event is ignored when its sender is not in the channel's `allowed_users` (logged at info, not debug). */
export const NOT_ALLOWED = 'not-allowed';

/**
 * What every platform's decide step admits by, the same three rules everywhere; a platform's
 * `DecideContext` adds its own (bot id, team, …). Built once per ingress (`admissionRules`), not
 * per event. `UserId` is the platform's sender id (Telegram's are numbers).
 */
export interface AdmissionRules<UserId = string> {
  /** `allowed_users`; empty = everyone. */
  allowedUsers: ReadonlySet<UserId>;
  /** The chat commands' names: a leading slash word among them is a command, any other is chat. */
  commandNames: ReadonlySet<string>;
  /**
   * `channel_connections` is on (core has a binder): `/connect <code>` (Telegram: `/start <code>`)
   * binds the sender, before the allow-list; false when binding is not configured.
   */
  canBind: boolean;
}

/** The admission rules of a channel's `allowed_users` and core's commands and binder. */
export function admissionRules<UserId = string>(deps: Pick<ChannelDeps, 'commands' | 'binder'>, allowedUsers: Iterable<UserId>): AdmissionRules<UserId> {
  return {
    allowedUsers: new Set(allowedUsers),
    commandNames: new Set(deps.commands.map((command) => command.name)),
    canBind: deps.binder !== undefined,
  };
}

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
