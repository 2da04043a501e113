import type { MemoryFactCategory, MemorySummaries } from '../../db/schema/memory.js';

export type { MemoryFactCategory, MemorySummaries };

/** A stored fact about a user. */
export interface MemoryFact {
  id: string;
  /** Trimmed; unique per user. */
  content: string;
  category: MemoryFactCategory;
  /** 0..1 as the extraction model judged it. */
  confidence: number;
  /** The thread id the fact was learned in; null when unknown. Never message text. */
  source: string | null;
  createdAt: Date;
}

/** Everything remembered about one user. */
export interface UserMemory {
  summaries: MemorySummaries;
  /** Newest first. */
  facts: MemoryFact[];
}

/** A fact the extraction model proposes; the store still filters it (trim, threshold, duplicates). */
export interface ProposedFact {
  content: string;
  category: MemoryFactCategory;
  confidence: number;
}

/** One extraction result, as validated from the model's JSON. */
export interface MemoryUpdate {
  /** Summaries the model rewrote; a field that is absent or blank keeps the stored text. */
  summaries: Partial<MemorySummaries>;
  newFacts: ProposedFact[];
  /** Ids of stored facts the conversation contradicts or retracts. */
  factsToRemove: string[];
}

/** One turn of a conversation as the updater sees it: user input or a final assistant answer. */
export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** A request to learn from one thread's conversation, on behalf of one user. */
export interface MemoryJob {
  /** The storage user id whose memory is updated. */
  userId: string;
  /** Recorded as the facts' `source`; with `userId`, the queue's dedupe key. */
  threadId: string;
  conversation: ConversationTurn[];
  /** The run's model name; used for extraction when `memory.model_name` is not set. */
  modelName?: string | undefined;
}

/** What one `MemoryStore.apply` changed. */
export interface MemoryChanges {
  /** Summary fields replaced (0..3). */
  summariesUpdated: number;
  /** New facts inserted (before the cap; a fact may be inserted and evicted by the same update). */
  factsAdded: number;
  /** Stored facts deleted because the update listed them in `factsToRemove`. */
  factsRemoved: number;
  /** Facts deleted to keep the user within `maxFacts`. */
  factsEvicted: number;
}
