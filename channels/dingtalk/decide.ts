import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED } from '../../src/channel/ingress/decision.js';
import { type ParsedRobotMessage, stripLeadingMentions } from './parse.js';

/** DingTalk decides by the admission rules alone. */
export type DecideContext = AdmissionRules;

/** `platformData` of a group message that quotes another: the quoted message's id (see `ingress.ts` `place`). */
export const QUOTED_MESSAGE_ID = 'quotedMessageId';

/**
 * What a robot message asks of core (reference §6.5), pure: `/connect <code>` binds (before the
 * allow-list, so a person not yet allowed can bind); a sender outside `allowed_users` is
 * ignored; anything else goes to the agent, deduplicated by its `msgId`. A P2P chat is one
 * conversation; every group message starts its own (reference §3.3: members do not wait for each
 * other), and one that quotes another continues that one's (settled once admitted).
 */
export function decideRobotMessage(message: ParsedRobotMessage, context: DecideContext): IngressDecision {
  const deliveryKey = message.messageId;
  const code = context.canBind ? parseConnectCommand(message.text) : undefined;
  if (code !== undefined) {
    return {
      kind: 'bind',
      deliveryKey,
      request: {
        identity: { externalAccountId: message.userId, ...(message.isPrivateChat ? {} : { workspaceId: message.conversationId }) },
        code,
        ...(message.userName === undefined ? {} : { accountName: message.userName }),
        metadata: { conversation_type: message.isPrivateChat ? '1' : '2', conversation_id: message.conversationId },
      },
      answerTo: { chatId: message.chatId, isPrivateChat: message.isPrivateChat, replyTo: { messageId: message.messageId } },
    };
  }
  const isAllowListed = context.allowedUsers.size > 0;
  if (isAllowListed && !context.allowedUsers.has(message.userId)) return { kind: 'ignore', reason: NOT_ALLOWED };
  // `@someone /status` is a command: the manager parses the text the classification read.
  const bare = stripLeadingMentions(message.text);
  const kind = classifyText(bare, context.commandNames);
  return {
    kind: 'forward',
    deliveryKey,
    message: {
      channel: 'dingtalk',
      chatId: message.chatId,
      userId: message.userId,
      senderIsAllowlisted: isAllowListed,
      // The conversation id scopes dedupe (reference §9); bindings use it only in groups (§6.0).
      workspaceId: message.conversationId,
      messageId: message.messageId,
      text: kind === 'command' ? bare : message.text,
      kind,
      isPrivateChat: message.isPrivateChat,
      ...(message.isPrivateChat ? {} : { topicId: message.messageId }),
      ...(message.files.length === 0 ? {} : { files: message.files }),
      ...(message.isPrivateChat || message.quotedMessageId === undefined ? {} : { platformData: { [QUOTED_MESSAGE_ID]: message.quotedMessageId } }),
    },
  };
}
