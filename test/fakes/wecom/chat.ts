/** What people see in the fake WeCom: bot messages per chat. */

export type BotMessageKind = 'stream' | 'markdown' | 'image' | 'file';

export interface FakeBotMessage {
  /** Streams: the stream id; others `bot-<n>`. */
  id: string;
  /** The userid of a single chat, the chatid of a group (the adapter's chat ids). */
  chatId: string;
  kind: BotMessageKind;
  text: string;
  /** Streams: the member's message the stream answers (its `msgid`). */
  replyTo?: string;
  history: string[];
  sentAt: number;
  editedAt: number[];
  /** Streams: `finish` was sent. Others: true. */
  isFinished: boolean;
  /** Images and files: the media sent and its upload's name. */
  mediaId?: string;
  fileName?: string;
}

export class ChatStore {
  private readonly messages: FakeBotMessage[] = [];
  private nextId = 1;

  add(message: Omit<FakeBotMessage, 'id' | 'history' | 'editedAt'> & { id?: string }): FakeBotMessage {
    const stored: FakeBotMessage = { ...message, id: message.id ?? `bot-${this.nextId++}`, history: [message.text], editedAt: [] };
    this.messages.push(stored);
    return stored;
  }

  find(id: string): FakeBotMessage | undefined {
    return this.messages.find((m) => m.id === id);
  }

  edit(message: FakeBotMessage, text: string, at: number): void {
    message.text = text;
    message.history.push(text);
    message.editedAt.push(at);
  }

  inChat(chatId: string): FakeBotMessage[] {
    return this.messages.filter((m) => m.chatId === chatId);
  }

  all(): FakeBotMessage[] {
    return [...this.messages];
  }
}
