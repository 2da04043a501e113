import { classifyText } from '../../src/channel/commands.js';
import type { HostedConversation, HostedFileRef } from '../../src/channel/hosted-chats.js';
import type { IngressDecision } from '../../src/channel/ingress/decision.js';
import { fileRef } from './ids.js';

/** Who is writing, as the gateway authenticated them. */
export interface WebCaller {
  /** Their account; undefined on a server without accounts. */
  ownerUserId: string | undefined;
  /** The sender id the agent and the turn journal see: the account id, or `local` without accounts. */
  userId: string;
}

export interface WebMessageInput {
  conversation: HostedConversation;
  caller: WebCaller;
  text: string;
  /** The page's id for this message: a resent request (a retry after a lost answer) runs once. */
  clientMessageId: string;
  files: readonly HostedFileRef[];
  commandNames: ReadonlySet<string>;
}

/**
 * A message typed in the web chat, for the pipeline. Pure. The route has checked that the caller
 * owns the conversation and that the message is not empty; the sender is the authenticated
 * account, so the identity gate has nothing to look up (`requiresBoundIdentity: false`).
 */
export function decideWebMessage(input: WebMessageInput): IngressDecision {
  const { conversation, caller, text, files } = input;
  return {
    kind: 'forward',
    message: {
      channel: 'web',
      chatId: conversation.id,
      userId: caller.userId,
      // The journal dedupes per chat: a page's ids are unique within its conversation.
      workspaceId: conversation.id,
      messageId: input.clientMessageId,
      text,
      kind: classifyText(text, input.commandNames),
      isPrivateChat: true,
      ...(caller.ownerUserId === undefined ? {} : { ownerUserId: caller.ownerUserId }),
      ...(files.length === 0
        ? {}
        : {
            files: files.map((file) => ({
              name: file.name,
              mimeType: file.mimeType,
              isImage: file.mimeType.startsWith('image/'),
              declaredSize: file.size,
              ref: fileRef(conversation.id, file.id),
            })),
          }),
    },
  };
}
