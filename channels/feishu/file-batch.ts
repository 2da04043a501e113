import type { PendingInbound } from '../../src/channel/ingress/decision.js';
import type { JsonValue } from '../../src/channel/types.js';

/** How long after someone's first lone file their next ones join it (reference §6.4). */
export const FILE_BATCH_WINDOW_MS = 750;

/**
 * A message that is one file or picture and nothing else, outside any reply chain: what Feishu
 * sends for each item when someone picks several pictures or files at once.
 */
export function isLoneFile(message: PendingInbound): boolean {
  const ids = message.platformData ?? {};
  const isInChain = ids.rootId !== undefined || ids.parentId !== undefined || ids.threadId !== undefined;
  return message.kind === 'chat' && !isInChain && message.files?.length === 1 && (message.text === '[image]' || message.text === '[file]');
}

/**
 * The batch as one message: the first one's ids and reply anchor, the texts joined by blank
 * lines, the files in order, and every message id in `platformData.batchedMessageIds`.
 */
export function mergeBatch(messages: readonly PendingInbound[]): PendingInbound {
  const [first, ...rest] = messages as [PendingInbound, ...PendingInbound[]];
  if (rest.length === 0) return first;
  return {
    ...first,
    text: messages.map((message) => message.text).join('\n\n'),
    files: messages.flatMap((message) => message.files ?? []),
    platformData: { ...first.platformData, batchedMessageIds: messages.map((message) => message.messageId ?? null) as JsonValue },
  };
}

/** The person's messages one request stands for: its own, or every message of its batch. */
export function sourceMessageIds(messageId: string, platformData: Readonly<Record<string, JsonValue>> | undefined): string[] {
  const batched = platformData?.batchedMessageIds;
  return Array.isArray(batched) ? batched.filter((id): id is string => typeof id === 'string') : [messageId];
}

interface OpenBatch {
  messages: PendingInbound[];
  /** When its first message was received: the batch's receipt time. */
  receivedAt: number;
  timer: ReturnType<typeof setTimeout>;
  done: Promise<boolean>;
  close: () => void;
}

/**
 * Lone files one person sends in one chat within {@link FILE_BATCH_WINDOW_MS} of the first become
 * one message, so the agent answers "compare these three pictures" once, not three times. The
 * window is counted from the first file; a file after it starts a new batch.
 */
export class FileBatches {
  private readonly open = new Map<string, OpenBatch>();

  /** `admit` takes each merged batch and its first message's receipt time; its result is what every message of the batch resolves with. */
  constructor(
    private readonly admit: (merged: PendingInbound, receivedAt: number) => Promise<boolean>,
    private readonly windowMs = FILE_BATCH_WINDOW_MS,
  ) {}

  /** Adds a lone file received at `receivedAt`; resolves once its batch was admitted (true) or refused (false). Rejects as `admit` does. */
  add(message: PendingInbound, receivedAt: number): Promise<boolean> {
    const key = `${message.chatId}\n${message.userId}`;
    const joined = this.open.get(key);
    if (joined !== undefined) {
      joined.messages.push(message);
      return joined.done;
    }
    let windowEnded: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (windowEnded = resolve));
    const batch: OpenBatch = {
      messages: [message],
      receivedAt,
      timer: setTimeout(() => batch.close(), this.windowMs),
      done: ended.then(() => this.admit(mergeBatch(batch.messages), batch.receivedAt)),
      close: () => {
        clearTimeout(batch.timer);
        // Closed at once: a file arriving from now on starts the next batch.
        if (this.open.get(key) === batch) this.open.delete(key);
        windowEnded();
      },
    };
    this.open.set(key, batch);
    return batch.done;
  }

  /** Admits every open batch now (shutting down). */
  closeAll(): void {
    for (const batch of this.open.values()) batch.close();
  }
}
