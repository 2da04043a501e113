/**
 * Per-user memory (reference backend guide, "Memory System"): after a run, the thread's
 * conversation ({@link conversationForMemory}) is queued ({@link MemoryQueue}); when the thread
 * has been quiet for `debounce_seconds`, {@link MemoryUpdater} asks a model what to remember and
 * {@link MemoryStore} applies it. Before a run, {@link formatMemoryForPrompt} renders what is
 * remembered for the system prompt.
 */
export { type MemoryConfig, memoryConfigSchema } from './config.js';
export { conversationForMemory, MAX_CONVERSATION_CHARS } from './conversation.js';
export { buildExtractionMessages, parseMemoryUpdate } from './extraction.js';
export { formatMemoryForPrompt } from './inject.js';
export { MemoryQueue, type MemoryQueueOptions } from './queue.js';
export { type ApplyMemoryOptions, EMPTY_SUMMARIES, MemoryStore } from './store.js';
export type {
  ConversationTurn,
  MemoryChanges,
  MemoryFact,
  MemoryFactCategory,
  MemoryJob,
  MemorySummaries,
  MemoryUpdate,
  ProposedFact,
  UserMemory,
} from './types.js';
export { MemoryUpdater, type MemoryUpdaterOptions } from './updater.js';
