import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type AIMessage, type BaseMessage, HumanMessage, SystemMessage, type ToolMessage } from '@langchain/core/messages';
import { withoutThinking } from '../thinking.js';
import { estimateTokens } from '../tokens.js';

/** Opening of the summariser's system prompt; tests recognise its requests by it. */
export const SUMMARY_PROMPT_OPENING = 'You keep the running summary of a long conversation between a person and an AI assistant.';

function summaryInstructions(maxTokens: number): string {
  // ~0.75 words per token in English; the hard cap in `summarize` catches a model that overshoots.
  const words = Math.max(50, Math.floor(maxTokens * 0.7));
  return `${SUMMARY_PROMPT_OPENING}
The older part of the conversation no longer fits in the assistant's context, so your summary is all it will know of it.

You get the summary so far (possibly empty) and the messages that follow it. Write the updated summary:
- Keep every fact the person stated about themselves, their work and their preferences, with exact names, numbers, dates, paths, ids and codes.
- Keep decisions made, questions still open, tasks in progress and what the assistant promised or produced (files, commands, results).
- Leave out greetings, thanks, repetition, and the details of tool output that no longer matter.
- Write in the language of the conversation, in short plain sentences or bullet points, oldest first.
- At most ${words} words. Output only the summary, with no preamble.`;
}

/** Characters of one tool result or tool-call argument list the summariser reads: enough for its gist. */
const MAX_TOOL_TEXT_CHARS = 1_500;
const MAX_TOOL_ARGS_CHARS = 300;

/** Wraps the summary for the model's request: data about the conversation, not an instruction. */
export function summaryMessage(summary: string): HumanMessage {
  return new HumanMessage({
    content: `<conversation_summary>\nThe earlier part of this conversation, summarised; the messages after this one follow it.\n\n${summary}\n</conversation_summary>`,
    additional_kwargs: { hide_from_ui: true },
  });
}

/** One line of the summariser's transcript per message; '' for messages it need not read. */
export function transcriptLine(message: BaseMessage): string {
  const type = message.getType();
  if (type === 'human') {
    const who = message.additional_kwargs?.hide_from_ui === true ? 'Note to the assistant' : 'Person';
    return `${who}: ${textOf(message)}`;
  }
  if (type === 'ai') {
    const lines: string[] = [];
    const text = withoutThinking(textOf(message)).trim();
    if (text !== '') lines.push(`Assistant: ${text}`);
    for (const call of (message as AIMessage).tool_calls ?? []) {
      lines.push(`Assistant used ${call.name}(${clip(JSON.stringify(call.args ?? {}), MAX_TOOL_ARGS_CHARS)})`);
    }
    return lines.join('\n');
  }
  if (type === 'tool') return `Result of ${(message as ToolMessage).name ?? 'the tool'}: ${clip(textOf(message), MAX_TOOL_TEXT_CHARS)}`;
  return '';
}

function textOf(message: BaseMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : `[${part.type}]`)).join(' ');
}

function clip(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)} [...]`;
}

export interface SummarizeInput {
  model: BaseChatModel;
  /** The summary so far; '' at the first fold. */
  previous: string;
  /** Transcript lines of the messages to fold in (see {@link transcriptLine}). */
  lines: readonly string[];
  maxTokens: number;
  signal?: AbortSignal;
}

/**
 * The summary of `previous` and `lines` together, written by `model`. Tagged `nostream`, so the
 * call never streams into the chat as if it were the answer; reasoning is dropped, and a summary
 * longer than twice `maxTokens` is cut, so a model that ignores the limit cannot grow it forever.
 *
 * @throws Error when the model fails or answers with nothing.
 */
export async function summarize(input: SummarizeInput): Promise<string> {
  const response = await input.model.invoke(
    [
      new SystemMessage(summaryInstructions(input.maxTokens)),
      new HumanMessage(`<summary_so_far>\n${input.previous}\n</summary_so_far>\n\n<messages>\n${input.lines.join('\n\n')}\n</messages>`),
    ],
    { runName: 'summarize_conversation', tags: ['nostream'], ...(input.signal ? { signal: input.signal } : {}) },
  );
  const summary = withoutThinking(response.text).trim();
  if (summary === '') throw new Error('the summariser answered with nothing');
  const limitChars = input.maxTokens * 2 * 4;
  return estimateTokens(summary) <= input.maxTokens * 2 ? summary : `${summary.slice(0, limitChars)} [...]`;
}
