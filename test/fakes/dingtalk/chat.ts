/** What people see in the fake DingTalk: bot messages per chat, as the fake's views. */

export type BotMessageKind = 'text' | 'markdown' | 'card' | 'image' | 'file';

export interface FakeBotMessage {
  id: string;
  /** P2P: the user's staff id; group: the conversation id (the adapter's chat ids). */
  chatId: string;
  kind: BotMessageKind;
  /** How it was sent. */
  via: 'session' | 'robot' | 'card';
  text: string;
  /** The user message it answers: known for session webhook replies and cards whose outTrackId names it. */
  replyTo?: string;
  history: string[];
  sentAt: number;
  editedAt: number[];
  /** Cards: whether the stream was finalized. */
  isFinalized: boolean;
  /** Files: the uploaded media and name. */
  mediaId?: string;
  fileName?: string;
}

export class ChatStore {
  private readonly messages: FakeBotMessage[] = [];
  private nextId = 1;

  add(message: Omit<FakeBotMessage, 'id' | 'history' | 'editedAt' | 'isFinalized'> & { id?: string }): FakeBotMessage {
    const stored: FakeBotMessage = {
      ...message,
      id: message.id ?? `bot-${this.nextId++}`,
      history: [message.text],
      editedAt: [],
      isFinalized: message.kind !== 'card',
    };
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
