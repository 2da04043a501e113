import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { ToolMessage } from '@langchain/core/messages';
import { estimateTokens } from '../tokens.js';
import type { SummarizationConfig } from './config.js';

/** What a request may hold, in estimated tokens, for a model with a context window. */
export interface ContextBudget {
  /** System prompt, tool definitions, summary and history together. */
  input: number;
  /** The summary at most. */
  summary: number;
  /** Share of what the prompt and the summary leave that the newest turns may fill after a fold. */
  keepShare: number;
}

/** A summary's share of the budget, and its ceiling: enough for the facts of a long chat, little enough to leave room. */
const SUMMARY_SHARE = 0.15;
const MAX_SUMMARY_TOKENS = 2_000;

export function contextBudget(contextWindow: number, config: Pick<SummarizationConfig, 'answer_reserve' | 'keep_recent'>): ContextBudget {
  const input = Math.floor(contextWindow * (1 - config.answer_reserve));
  return { input, summary: Math.min(MAX_SUMMARY_TOKENS, Math.floor(input * SUMMARY_SHARE)), keepShare: config.keep_recent };
}

/** Tokens a message costs beyond its text: role and separators in the chat template. */
const MESSAGE_OVERHEAD_TOKENS = 4;
/** An image part, as OpenAI bills a high-detail 512-pixel tile and its base; providers differ, this errs high. */
export const IMAGE_TOKENS = 1_000;

/** Messages are immutable once in a thread's state, so each is estimated once per process. */
const estimated = new WeakMap<BaseMessage, number>();

/** Estimated tokens of one message as a request carries it: its text, images and tool calls. */
export function messageTokens(message: BaseMessage): number {
  let tokens = estimated.get(message);
  if (tokens === undefined) {
    tokens = MESSAGE_OVERHEAD_TOKENS + contentTokens(message.content);
    for (const call of (message as AIMessage).tool_calls ?? []) tokens += estimateTokens(call.name) + estimateTokens(JSON.stringify(call.args ?? {}));
    estimated.set(message, tokens);
  }
  return tokens;
}

function contentTokens(content: BaseMessage['content']): number {
  if (typeof content === 'string') return estimateTokens(content);
  let tokens = 0;
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') tokens += estimateTokens(part.text);
    else if (part.type === 'image_url' || part.type === 'image') tokens += IMAGE_TOKENS;
    else tokens += estimateTokens(JSON.stringify(part));
  }
  return tokens;
}

export function messagesTokens(messages: readonly BaseMessage[]): number {
  let tokens = 0;
  for (const message of messages) tokens += messageTokens(message);
  return tokens;
}

/** A turn begins where the person wrote: a human message the server did not add (`hide_from_ui`). */
function beginsTurn(message: BaseMessage): boolean {
  return message.getType() === 'human' && message.additional_kwargs?.hide_from_ui !== true;
}

/**
 * Where the verbatim part of `messages` should begin once older turns are folded into the
 * summary: the oldest turn start from which the rest fits in `keepTokens`, else the start of the
 * newest turn (the one being answered is never folded). Cuts fall only where a person's message
 * begins a turn, so a tool call always stays with its result. 0 when nothing can be folded.
 */
export function firstKeptIndex(messages: readonly BaseMessage[], keepTokens: number): number {
  let newestTurn = 0;
  let fitting = 0;
  let tail = 0;
  for (let i = messages.length - 1; i > 0; i--) {
    tail += messageTokens(messages[i] as BaseMessage);
    if (!beginsTurn(messages[i] as BaseMessage)) continue;
    if (newestTurn === 0) newestTurn = i;
    if (tail > keepTokens) break;
    fitting = i;
  }
  return fitting || newestTurn;
}

/** Tool output never shrinks below this many characters, so its gist survives. */
const MIN_TOOL_RESULT_CHARS = 400;
/** Room for the note that says how much was left out. */
const SHORTENED_MARKER_CHARS = 100;

/**
 * `messages` with tool results shortened, oldest first, until they fit in `maxTokens` or every
 * result is as short as it may be. For one request only: the thread keeps the results whole.
 * The last resort when the turn being answered outgrows the budget on its own (a long tool loop),
 * since a turn in progress is never folded into the summary.
 */
export function withToolResultsShortened(messages: readonly BaseMessage[], maxTokens: number): BaseMessage[] {
  let excess = messagesTokens(messages) - maxTokens;
  if (excess <= 0) return [...messages];
  return messages.map((message) => {
    if (excess <= 0 || !(message instanceof ToolMessage) || typeof message.content !== 'string') return message;
    const text = message.content;
    if (text.length <= MIN_TOOL_RESULT_CHARS) return message;
    // Characters to drop for the excess at ~4 per token, and for the marker; never below the floor.
    const keptChars = Math.max(MIN_TOOL_RESULT_CHARS, text.length - excess * 4 - SHORTENED_MARKER_CHARS);
    const half = Math.floor(keptChars / 2);
    const shortened = `${text.slice(0, half)}\n[... ${text.length - 2 * half} characters of this output left out to fit the model's context ...]\n${text.slice(-half)}`;
    const replacement = new ToolMessage({ content: shortened, tool_call_id: message.tool_call_id, name: message.name, id: message.id, status: message.status });
    excess -= messageTokens(message) - messageTokens(replacement);
    return replacement;
  });
}
