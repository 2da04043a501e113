import type { BotMessageView } from './channel-contract.js';

/** What a fake keeps of one bot message, under the contract's names. */
export interface RecordedBotMessage {
  text: string;
  replyTo?: string | undefined;
  history: string[];
  sentAt: number;
  editedAt: number[];
}

/**
 * `message` as {@link BotMessageView}, for a fake that records its bot messages under the
 * contract's names; `display` is how the platform shows the current text. A message that answers
 * nothing has no `replyTo` at all, not an undefined one.
 */
export function botMessageView(messageId: string, message: RecordedBotMessage, display: { shown: string; links: NonNullable<BotMessageView['links']> }): BotMessageView {
  return {
    messageId,
    text: message.text,
    ...(message.replyTo === undefined ? {} : { replyTo: message.replyTo }),
    history: message.history,
    sentAt: message.sentAt,
    editedAt: message.editedAt,
    shown: display.shown,
    links: display.links,
  };
}
