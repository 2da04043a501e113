import type { InboundMessage } from './types.js';

/** (channel, workspace, chat, platform message id): one accepted delivery of one message. */
export interface DedupeKey {
  channel: string;
  workspaceId: string;
  chatId: string;
  messageId: string;
}

/** A turn a process accepted and never finished: it died while answering. */
export interface UnfinishedTurn {
  /** The message as the worker took it, reply target included. */
  message: InboundMessage;
  /** How often it has now been taken up again, this time included (1 the first time). */
  resumes: number;
  /** When it was accepted, in milliseconds since the epoch. */
  acceptedAt: number;
}

/**
 * The turn journal. It remembers accepted messages for a while, so a platform redelivery runs once
 * (reference §4.2), and keeps each message with its reply target until its turn ended, so a turn
 * a crash interrupted can be taken up again (issue #15). `accept` is atomic across every process
 * sharing the journal.
 */
export interface TurnJournal {
  /** Records `message` under `key`: true when new (run it); false when accepted within the TTL (drop it). */
  accept(key: DedupeKey, message: InboundMessage): Promise<boolean>;
  /** The turn ended, answered or told: it is not taken up again, and the key still dedupes. */
  finish(key: DedupeKey): Promise<void>;
  /** Whether the turn under `key` was finished: a worker that took the message over from a stalled one then runs nothing. */
  hasFinished(key: DedupeKey): Promise<boolean>;
  /** Forgets the key so a redelivery may retry after a failure. */
  release(key: DedupeKey): Promise<void>;
  /**
   * Every unfinished turn, each counted as taken up once more. Only for a process that knows no
   * other works on the journal (the sole process, at start): every unfinished turn is then an orphan.
   */
  resumeUnfinished(): Promise<UnfinishedTurn[]>;
}

export const DEDUPE_TTL_MS = 10 * 60 * 1000;

/**
 * No message id or no workspace → no key: better to answer twice than to collapse two
 * workspaces' identical ids into one (reference §13 item 7).
 */
export function dedupeKeyOf(message: InboundMessage): DedupeKey | undefined {
  if (!message.messageId || !message.workspaceId) return undefined;
  return { channel: message.channel, workspaceId: message.workspaceId, chatId: message.chatId, messageId: message.messageId };
}

interface JournalEntry {
  acceptedAt: number;
  /** Until the turn finished. */
  message?: InboundMessage;
  resumes: number;
}

/** In-memory journal: TTL and a size cap, oldest evicted first; it dies with the process, so nothing is ever resumed from it after a crash. */
export class MemoryTurnJournal implements TurnJournal {
  private readonly entries = new Map<string, JournalEntry>();

  constructor(
    private readonly options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {}

  async accept(key: DedupeKey, message: InboundMessage): Promise<boolean> {
    const now = this.now();
    const ttl = this.options.ttlMs ?? DEDUPE_TTL_MS;
    for (const [id, entry] of this.entries) {
      if (now - entry.acceptedAt < ttl && this.entries.size < (this.options.maxEntries ?? 4096)) break;
      this.entries.delete(id);
    }
    const id = idOf(key);
    const entry = this.entries.get(id);
    if (entry !== undefined && now - entry.acceptedAt < ttl) return false;
    this.entries.delete(id);
    this.entries.set(id, { acceptedAt: now, message, resumes: 0 });
    return true;
  }

  async finish(key: DedupeKey): Promise<void> {
    const entry = this.entries.get(idOf(key));
    if (entry) delete entry.message;
  }

  async hasFinished(key: DedupeKey): Promise<boolean> {
    const entry = this.entries.get(idOf(key));
    return entry !== undefined && entry.message === undefined;
  }

  async release(key: DedupeKey): Promise<void> {
    this.entries.delete(idOf(key));
  }

  async resumeUnfinished(): Promise<UnfinishedTurn[]> {
    return [...this.entries.values()].flatMap((entry) => {
      if (entry.message === undefined) return [];
      entry.resumes += 1;
      return [{ message: entry.message, resumes: entry.resumes, acceptedAt: entry.acceptedAt }];
    });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

function idOf(key: DedupeKey): string {
  return JSON.stringify([key.channel, key.workspaceId, key.chatId, key.messageId]);
}
