import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { sqlState } from '../../db/index.js';
import type { Logger } from '../../logger.js';
import type { MemoryConfig } from './config.js';
import { buildExtractionMessages, parseMemoryUpdate } from './extraction.js';
import type { MemoryStore } from './store.js';
import type { MemoryJob } from './types.js';

export interface MemoryUpdaterOptions {
  store: Pick<MemoryStore, 'get' | 'apply'>;
  /**
   * Returns the chat model for extraction: the configured model of that name, or the default
   * model when the name is absent. May throw (unknown name); the update is then skipped.
   */
  model: (modelName?: string) => BaseChatModel;
  config: Pick<MemoryConfig, 'model_name' | 'max_facts' | 'fact_confidence_threshold'>;
  logger: Logger;
  /** Clock for the facts' `created_at`. Default `() => new Date()`. */
  now?: () => Date;
}

/**
 * Learns from conversations: asks a chat model what the conversation tells about the user, given
 * what is already remembered, and applies the answer to the store.
 */
export class MemoryUpdater {
  private readonly now: () => Date;

  constructor(private readonly options: MemoryUpdaterOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /**
   * Updates the job's user from its conversation, with `config.model_name`, else the job's
   * `modelName`, else the default model. Never throws: a model failure, an answer without a JSON
   * object or a database failure is logged as a warning (ids and error names only, never text)
   * and leaves memory unchanged. An empty conversation is skipped without calling the model.
   */
  async update(job: MemoryJob): Promise<void> {
    const { store, config, logger } = this.options;
    const ids = { userId: job.userId, threadId: job.threadId };
    if (job.conversation.length === 0) return;
    try {
      const memory = await store.get(job.userId);
      const messages = buildExtractionMessages(memory, job.conversation, {
        confidenceThreshold: config.fact_confidence_threshold,
        maxFacts: config.max_facts,
      });

      let output: string;
      try {
        const model = this.options.model(config.model_name ?? job.modelName);
        output = (await model.invoke(messages, { runName: 'memory_update' })).text;
      } catch (error) {
        logger.warn({ ...ids, error: errorFields(error) }, 'memory update skipped: the model call failed');
        return;
      }

      const update = parseMemoryUpdate(output);
      if (update === undefined) {
        logger.warn({ ...ids, outputChars: output.length }, 'memory update skipped: the model answer holds no JSON object');
        return;
      }
      const changes = await store.apply(job.userId, update, {
        source: job.threadId,
        maxFacts: config.max_facts,
        confidenceThreshold: config.fact_confidence_threshold,
        now: this.now(),
      });
      logger.info({ ...ids, ...changes }, 'memory updated');
    } catch (error) {
      logger.warn({ ...ids, error: errorFields(error) }, 'memory update failed');
    }
  }
}

/**
 * What a log may say about a failure. Not the message: driver errors quote query parameters
 * (fact text) and model endpoints may echo the prompt.
 */
function errorFields(error: unknown): { name: string; status?: number; code?: string } {
  if (!(error instanceof Error)) return { name: typeof error };
  const { status, code } = error as { status?: unknown; code?: unknown };
  const fields: { name: string; status?: number; code?: string } = { name: error.name };
  if (typeof status === 'number') fields.status = status;
  const state = sqlState(error) ?? (typeof code === 'string' ? code : undefined);
  if (state !== undefined) fields.code = state;
  return fields;
}
