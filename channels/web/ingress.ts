import type { HostedChats, HostedConversation, HostedFileRef } from '../../src/channel/hosted-chats.js';
import { type IngressOutcome, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import type { Topic } from '../../src/channel/topic.js';
import type { ChannelDeps, ReplyTarget } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { decideWebMessage, type WebCaller } from './decide.js';
import { parseFileRef, parsePlaceholderId, placeholderIdOf } from './ids.js';
import { messageJson } from './wire.js';

/** What the web chat says by itself. */
export const WEB_TEXTS = {
  /** The acknowledgement a reply replaces, as every platform shows it. */
  working: 'Working on it...',
} as const;

export interface WebIngressOptions {
  chats: HostedChats;
  topic: Topic;
  deps: Pick<ChannelDeps, 'intake' | 'binder' | 'deliveries' | 'now' | 'commands'>;
  logger: Logger;
}

/** A message as the route hands it over, checked: the caller owns the conversation, the files are its. */
export interface WebSubmission {
  conversation: HostedConversation;
  caller: WebCaller;
  text: string;
  clientMessageId: string;
  files: readonly HostedFileRef[];
}

/**
 * The web chat's ingress: a message posted by a page goes through core's pipeline like any
 * platform's. Its acknowledgement stores the person's message and the row the reply will replace
 * (both reach open pages at once); a duplicate or a refused commit takes both back.
 */
export class WebIngress {
  private readonly pipeline: IngressPipeline;
  private readonly commandNames: ReadonlySet<string>;

  constructor(private readonly options: WebIngressOptions) {
    this.commandNames = new Set(options.deps.commands.map((command) => command.name));
    const { chats, logger } = options;
    this.pipeline = new IngressPipeline(
      {
        platform: 'web',
        refusal: 'tell',
        say: (target, text) => this.say(target, text),
        acknowledge: async (message) => {
          try {
            const files = (message.files ?? []).map((file) => ({
              id: parseFileRef(file.ref)?.fileId ?? '',
              name: file.name,
              mimeType: file.mimeType,
              size: file.declaredSize ?? 0,
            }));
            const person = await chats.addMessage(message.chatId, { author: 'person', text: message.text, files, isFinal: true });
            const working = await chats.addMessage(message.chatId, { author: 'agent', text: WEB_TEXTS.working, isFinal: false });
            this.publish(message.chatId, person, working);
            return placeholderIdOf(working.id, person.id);
          } catch (error) {
            logger.warn({ err: describeError(error) }, 'web chat message not stored');
            return undefined;
          }
        },
        withdraw: async (message, placeholderId) => {
          const rows = placeholderId === undefined ? undefined : parsePlaceholderId(placeholderId);
          if (rows === undefined) return;
          await chats.deleteMessages(message.chatId, [rows.person, rows.reply]).catch((error: unknown) => {
            logger.warn({ err: describeError(error) }, 'web chat acknowledgement not taken back');
          });
        },
      },
      options.deps,
      logger,
    );
  }

  /** Admits one message; resolves with how admission ended. Rejects only on a bug. */
  async submit(submission: WebSubmission): Promise<IngressOutcome> {
    const decision = decideWebMessage({ ...submission, commandNames: this.commandNames });
    return this.pipeline.admit(decision, this.options.deps.now());
  }

  /** A text of the server's own in the conversation (a busy notice): a final agent message. */
  private async say(target: ReplyTarget, text: string): Promise<void> {
    const message = await this.options.chats.addMessage(target.chatId, { author: 'agent', text, isFinal: true });
    this.publish(target.chatId, message);
  }

  private publish(conversationId: string, ...messages: Parameters<typeof messageJson>[0][]): void {
    for (const message of messages) this.options.topic.publish(conversationId, { type: 'message', message: messageJson(message) });
  }
}
