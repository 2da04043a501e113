/**
 * The bot's messages in a fake platform's chats, in the order they were posted, each with the
 * texts it showed: what people see, for fakes whose bot can replace a message's text (a DingTalk
 * AI card, a WeCom stream). Each fake adds its own fields to {@link ChatLogMessage}; how a text
 * is shown stays in the fake's `display.ts`.
 */

/** What every chat log keeps of a bot message. */
export interface ChatLogMessage {
  /** The id the platform gave the message or the bot chose for it; else `bot-<n>`. */
  id: string;
  /** The adapter's chat id of the chat it is in. */
  chatId: string;
  /** Current text. */
  text: string;
  /** Texts in order: the original, then each edit. */
  history: string[];
  /** When it was posted, ms since the epoch (the fake's clock). */
  sentAt: number;
  /** When each edit arrived, ms since the epoch; same order as `history.slice(1)`. */
  editedAt: number[];
}

/** A message as the fake posts it: the log fills in its history, and its id unless the platform named one. */
export type NewChatLogMessage<Message extends ChatLogMessage> = Omit<Message, 'id' | 'history' | 'editedAt'> & { id?: string };

export class ChatLog<Message extends ChatLogMessage> {
  private readonly messages: Message[] = [];
  private nextId = 1;

  /** Posts `message` and returns it as stored: the object later edits change. */
  add(message: NewChatLogMessage<Message>): Message {
    // The fields `Omit` took out are back, but TypeScript cannot see that for a generic `Message`.
    const stored = { ...message, id: message.id ?? `bot-${this.nextId++}`, history: [message.text], editedAt: [] } as unknown as Message;
    this.messages.push(stored);
    return stored;
  }

  find(id: string): Message | undefined {
    return this.messages.find((m) => m.id === id);
  }

  /** Replaces `message`'s text with `text` at `at` (ms since the epoch), keeping the earlier ones in its history. */
  edit(message: Message, text: string, at: number): void {
    message.text = text;
    message.history.push(text);
    message.editedAt.push(at);
  }

  inChat(chatId: string): Message[] {
    return this.messages.filter((m) => m.chatId === chatId);
  }

  /** Every chat's messages, in the order they were posted; a copy. */
  all(): Message[] {
    return [...this.messages];
  }
}
