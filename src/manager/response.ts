import { withoutThinking } from '../agent/thinking.js';

/**
 * Reading the agent's answer out of LangGraph state (reference §4.7 "Response extraction"):
 * only assistant text of the current turn is ever shown; tool output, system and hidden
 * context never reach a chat, nor a reasoning model's `<think>` text.
 */

type MessageDict = Record<string, unknown>;

function typeOf(message: MessageDict): string {
  const type = message.type ?? (message.kwargs as MessageDict | undefined)?.type;
  if (typeof type === 'string') return type.toLowerCase();
  const id = message.id;
  if (Array.isArray(id) && typeof id[id.length - 1] === 'string') return (id[id.length - 1] as string).toLowerCase();
  return '';
}

/** Assistant payloads only: `ai`, `AIMessageChunk`, `assistant`, ... (reference §4.7 A). */
export function isAssistantMessage(message: unknown): message is MessageDict {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const type = typeOf(message as MessageDict);
  return type.startsWith('ai') || type.startsWith('assistant');
}

/** String content, or the concatenated `text` blocks of structured content. */
export function textOf(message: MessageDict): string {
  const content = message.content ?? (message.kwargs as MessageDict | undefined)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (block && typeof block === 'object' && (block as MessageDict).type === 'text' ? String((block as MessageDict).text ?? '') : ''))
    .join('');
}

function isHiddenHuman(message: MessageDict): boolean {
  const kwargs = message.additional_kwargs as MessageDict | undefined;
  return kwargs?.hide_from_ui === true;
}

function isClarification(message: MessageDict): boolean {
  const name = message.name ?? (message.kwargs as MessageDict | undefined)?.name;
  return typeOf(message) === 'tool' && name === 'ask_clarification';
}

/**
 * The answer of the current turn (everything after the last visible human message), '' when
 * none. A turn that ended in `ask_clarification` answers with the question. A goal loop adds
 * hidden human messages inside the turn; each stretch between them contributes its last
 * non-empty assistant text, so the user sees every visible step, oldest first.
 */
export function extractFinalText(values: unknown): string {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return '';
  const answers: string[] = [];
  let answer: string | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as MessageDict;
    if (!message || typeof message !== 'object') continue;
    const type = typeOf(message);
    if (type === 'human' || type === 'user') {
      if (answer !== undefined) answers.unshift(answer);
      answer = undefined;
      if (isHiddenHuman(message)) continue;
      break;
    }
    if (answer !== undefined) continue;
    if (isClarification(message)) answer = textOf(message);
    else if (isAssistantMessage(message)) {
      const visible = withoutThinking(textOf(message));
      if (visible.trim() !== '') answer = visible;
    }
  }
  if (answer !== undefined) answers.unshift(answer);
  return answers.filter((text) => text.trim() !== '').join('\n\n');
}

function hasToolCalls(message: MessageDict): boolean {
  const calls = message.tool_calls ?? (message.kwargs as MessageDict | undefined)?.tool_calls;
  return Array.isArray(calls) && calls.length > 0;
}

/**
 * The current turn ended with the agent asking the person a question (reference §4.7 "pending
 * clarification"): the last meaningful message of the turn is the `ask_clarification` tool
 * message. An assistant message with text or tool calls after it, or a human message (a goal
 * loop going on), means the question was not the end of the turn.
 */
export function endsInClarification(values: unknown): boolean {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return false;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as MessageDict;
    if (!message || typeof message !== 'object') continue;
    if (isClarification(message)) return true;
    const type = typeOf(message);
    if (type === 'human' || type === 'user') return false;
    if (isAssistantMessage(message) && (withoutThinking(textOf(message)).trim() !== '' || hasToolCalls(message))) return false;
  }
  return false;
}
