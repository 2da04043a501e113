import type { BaseMessage } from '@langchain/core/messages';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ModelConfig } from '../config.js';
import type { ChatModels } from '../models.js';
import { estimateTokens } from '../tokens.js';
import type { SummarizationConfig } from './config.js';
import { summarize, summaryMessage, transcriptLine } from './summarizer.js';
import { type ContextBudget, contextBudget, firstKeptIndex, messagesTokens, messageTokens, withToolResultsShortened } from './window.js';

export interface ContextKeeperOptions {
  config: SummarizationConfig;
  models: readonly ModelConfig[];
  chatModels: ChatModels;
  logger: Logger;
}

export interface FitInput {
  model: ModelConfig;
  /**
   * Estimated tokens of what every request carries besides the history (system prompt, tool
   * definitions, pictures); asked only for a model with a window, so other models pay nothing.
   */
  fixedTokens: () => number;
  /** The thread's summary of its folded turns; absent before the first fold. */
  summary: string | undefined;
  /** The thread's messages (the turns not folded yet). */
  messages: readonly BaseMessage[];
  threadId?: string;
  signal?: AbortSignal;
}

export interface FittedHistory {
  /** What the model reads after the system prompt: the summary, then the messages. */
  messages: BaseMessage[];
  /** Set when older turns were folded: the thread's new summary, and the messages it keeps. */
  folded?: { summary: string; kept: BaseMessage[] };
}

/** Summariser calls one fold may make; older turns beyond them are left out rather than wait on more. */
const MAX_SUMMARY_CALLS = 4;
/** The summariser's instructions and the wrapping of its input. */
const SUMMARY_PROMPT_TOKENS = 400;
/** After a failed fold, a thread's requests go without their oldest turns this long before the next try. */
const FOLD_RETRY_MS = 60_000;

/**
 * Keeps each model request of a conversation within its model's context window
 * (`models[].context_window`, less `summarization.answer_reserve`). When the history would not
 * fit, the oldest whole turns are folded into the thread's running summary, and the newest turns
 * stay verbatim (`summarization.keep_recent`). The summary rides in the thread's state and reaches
 * the model as a hidden message; it never shows in a chat.
 *
 * A summariser that fails leaves the thread as it was, and it is asked again a minute later;
 * meanwhile requests go without their oldest turns. Either way the request fits: a turn that outgrows
 * the budget on its own has its tool output shortened for the model.
 */
export class ContextKeeper {
  /** Threads whose last fold failed, with when: a summariser that is down is not asked at every model call. */
  private readonly failedFolds = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: ContextKeeperOptions & { now?: () => number }) {
    this.now = options.now ?? Date.now;
  }

  /** True when requests for `model` are kept within a window. */
  isActive(model: ModelConfig): boolean {
    return this.options.config.enabled && model.context_window !== undefined;
  }

  async fit(input: FitInput): Promise<FittedHistory> {
    const { messages } = input;
    const window = this.isActive(input.model) ? input.model.context_window : undefined;
    if (window === undefined) return { messages: withSummary(input.summary, [...messages]) };
    const budget = contextBudget(window, this.options.config);
    const fixedTokens = input.fixedTokens();
    if (fixedTokens + summaryTokens(input.summary) + messagesTokens(messages) <= budget.input) {
      return { messages: withSummary(input.summary, [...messages]) };
    }
    // The newest turns may fill their share of what the prompt and a full summary leave.
    const keepTokens = Math.max(0, Math.floor((budget.input - fixedTokens - budget.summary) * budget.keepShare));
    const cut = firstKeptIndex(messages, keepTokens);
    let folded: FittedHistory['folded'];
    if (cut > 0 && this.mayFold(input.threadId)) {
      try {
        const summary = await this.fold(input, messages.slice(0, cut), budget);
        folded = { summary, kept: messages.slice(cut) };
        if (input.threadId !== undefined) this.failedFolds.delete(input.threadId);
        this.options.logger.info(
          { threadId: input.threadId, foldedMessages: cut, keptMessages: messages.length - cut, summaryTokens: estimateTokens(summary) },
          'older turns folded into the conversation summary',
        );
      } catch (error) {
        if (input.signal?.aborted) throw error;
        this.foldFailed(input.threadId);
        this.options.logger.warn(
          { threadId: input.threadId, err: describeError(error) },
          'could not summarise older turns; requests go without them until the next try',
        );
      }
    }
    const summary = folded?.summary ?? input.summary;
    const room = budget.input - fixedTokens - summaryTokens(summary);
    let kept = folded?.kept ?? [...messages];
    if (folded === undefined) kept = kept.slice(firstKeptIndex(kept, room));
    return { messages: withSummary(summary, withToolResultsShortened(kept, room)), ...(folded ? { folded } : {}) };
  }

  private mayFold(threadId: string | undefined): boolean {
    const failedAt = threadId === undefined ? undefined : this.failedFolds.get(threadId);
    return failedAt === undefined || this.now() - failedAt >= FOLD_RETRY_MS;
  }

  private foldFailed(threadId: string | undefined): void {
    if (threadId === undefined) return;
    const now = this.now();
    // Entries past their wait are forgotten, so the map holds only threads failing right now.
    for (const [thread, failedAt] of this.failedFolds) if (now - failedAt >= FOLD_RETRY_MS) this.failedFolds.delete(thread);
    this.failedFolds.set(threadId, now);
  }

  /**
   * `previous` summary and `messages` folded into one summary, in as many calls as the
   * summariser's window needs (at most {@link MAX_SUMMARY_CALLS}: the newest that many chunks).
   * Written by `summarization.model_name`, or the run's model when that is unset or fails.
   */
  private async fold(input: FitInput, messages: readonly BaseMessage[], budget: ContextBudget): Promise<string> {
    const writers = this.summaryModels(input.model);
    let lastError: unknown;
    for (const writer of writers) {
      const writerWindow = writer.context_window ?? (input.model.context_window as number);
      const writerBudget = contextBudget(writerWindow, this.options.config);
      const chunkTokens = Math.max(256, writerBudget.input - budget.summary - SUMMARY_PROMPT_TOKENS);
      const chunks = chunked(messages.map(transcriptLine).filter((line) => line !== ''), chunkTokens);
      if (chunks.length > MAX_SUMMARY_CALLS) {
        this.options.logger.warn(
          { threadId: input.threadId, chunks: chunks.length, summarised: MAX_SUMMARY_CALLS },
          'history too long to summarise at once; its oldest part is left out',
        );
      }
      try {
        let summary = input.summary ?? '';
        for (const lines of chunks.slice(-MAX_SUMMARY_CALLS)) {
          summary = await summarize({
            model: this.options.chatModels.get(writer.name),
            previous: summary,
            lines,
            maxTokens: budget.summary,
            ...(input.signal ? { signal: input.signal } : {}),
          });
        }
        return summary;
      } catch (error) {
        if (input.signal?.aborted) throw error;
        lastError = error;
        if (writer !== input.model) {
          this.options.logger.warn({ model: writer.name, err: describeError(error) }, 'summary model failed; summarising with the run’s model');
        }
      }
    }
    throw lastError;
  }

  private summaryModels(runModel: ModelConfig): ModelConfig[] {
    const named = this.options.models.find((model) => model.name === this.options.config.model_name);
    return named === undefined || named.name === runModel.name ? [runModel] : [named, runModel];
  }
}

/** The history as a model reads it: the summary of the folded turns first, when there is one. */
export function withSummary(summary: string | undefined, messages: BaseMessage[]): BaseMessage[] {
  return summary ? [summaryMessage(summary), ...messages] : messages;
}

function summaryTokens(summary: string | undefined): number {
  return summary ? messageTokens(summaryMessage(summary)) : 0;
}

/** `lines` in chunks of at most `maxTokens` each, in order; a line longer than that is clipped. */
function chunked(lines: readonly string[], maxTokens: number): string[][] {
  const chunks: string[][] = [];
  let chunk: string[] = [];
  let tokens = 0;
  for (const whole of lines) {
    let line = whole;
    let lineTokens = estimateTokens(line);
    if (lineTokens > maxTokens) {
      // Clipped to the share of its characters that fits (CJK text counts a token a character).
      line = `${line.slice(0, Math.floor((line.length * maxTokens) / lineTokens))} [...]`;
      lineTokens = estimateTokens(line);
    }
    if (tokens + lineTokens > maxTokens && chunk.length > 0) {
      chunks.push(chunk);
      chunk = [];
      tokens = 0;
    }
    chunk.push(line);
    tokens += lineTokens;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
