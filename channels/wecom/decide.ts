import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED } from '../../src/channel/ingress/decision.js';
import type { ReplyTarget } from '../../src/channel/types.js';
import { type ParsedMessage, stripLeadingMentions } from './parse.js';

/** WeCom decides by the admission rules alone. */
export type DecideContext = AdmissionRules;

/** `platformData` key of the callback's `req_id`: the stream reply (and every passive reply) names it. */
export const REQ_ID = 'reqId';

/**
 * What a member's message asks of core (reference §6.7), pure: `/connect <code>` binds first
 * (identity = userid, workspace = the bot, reference §8.1); a sender outside `allowed_users`
 * is ignored; anything else goes to the agent, deduplicated by its `msgid`. One conversation per
 * chat: a single chat is its member's, a group's is the group's.
 */
export function decideMessage(message: ParsedMessage, reqId: string, context: DecideContext): IngressDecision {
  const deliveryKey = message.messageId;
  const platformData = { [REQ_ID]: reqId };
  const code = context.canBind ? parseConnectCommand(message.text) : undefined;
  if (code !== undefined) {
    const answerTo: ReplyTarget = { chatId: message.chatId, isPrivateChat: message.isPrivateChat, replyTo: { messageId: message.messageId }, platformData };
    return {
      kind: 'bind',
      deliveryKey,
      request: {
        identity: { externalAccountId: message.userId, workspaceId: message.botId },
        code,
        metadata: { aibotid: message.botId, chattype: message.isPrivateChat ? 'single' : 'group' },
      },
      answerTo,
    };
  }
  const isAllowListed = context.allowedUsers.size > 0;
  if (isAllowListed && !context.allowedUsers.has(message.userId)) return { kind: 'ignore', reason: NOT_ALLOWED };
  // `@bot /new` in a group is a command: the manager parses the text the classification read.
  const bare = stripLeadingMentions(message.text);
  const kind = classifyText(bare, context.commandNames);
  return {
    kind: 'forward',
    deliveryKey,
    message: {
      channel: 'wecom',
      chatId: message.chatId,
      userId: message.userId,
      senderIsAllowlisted: isAllowListed,
      // The bot scopes dedupe (reference §1.5 `aibotid`) and bindings (§6.0).
      workspaceId: message.botId,
      messageId: message.messageId,
      text: kind === 'command' ? bare : message.text,
      kind,
      isPrivateChat: message.isPrivateChat,
      ...(message.files.length === 0 ? {} : { files: message.files }),
      platformData,
    },
  };
}
