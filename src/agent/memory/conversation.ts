import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import type { ConversationTurn } from './types.js';

/** Most characters of conversation sent for extraction; the newest turns are kept. */
export const MAX_CONVERSATION_CHARS = 12_000;

/**
 * Blocks the server adds to messages (the injected memory itself, upload notes, reminders) and
 * a model's reasoning. None of it is something the user said, so none of it may become a fact;
 * learning from `<memory>` would also feed memory back into itself.
 */
const INJECTED_BLOCK = /<(memory|uploaded_files|current_uploads|system-reminder|think)>[\s\S]*?<\/\1>/gi;

/**
 * The part of a thread worth learning from: user inputs and final assistant answers, in order.
 * Skipped: system and tool messages, assistant messages that call tools (steps, not answers),
 * human messages marked `additional_kwargs.hide_from_ui === true` (server-made context), and
 * anything left empty once injected blocks (`<memory>`, `<uploaded_files>`, `<think>`, ...) are
 * removed. Keeps the newest whole turns within {@link MAX_CONVERSATION_CHARS} characters; a newest
 * turn longer than that on its own is cut to its beginning, so the newest input is never lost.
 */
export function conversationForMemory(messages: BaseMessage[], maxChars: number = MAX_CONVERSATION_CHARS): ConversationTurn[] {
  const turns: ConversationTurn[] = [];
  for (const message of messages) {
    const role = roleOf(message);
    if (role === undefined) continue;
    const content = message.text.replace(INJECTED_BLOCK, '').trim();
    if (content !== '') turns.push({ role, content });
  }
  return newestWithin(turns, maxChars);
}

function roleOf(message: BaseMessage): ConversationTurn['role'] | undefined {
  if (message.type === 'human') return message.additional_kwargs?.hide_from_ui === true ? undefined : 'user';
  if (message.type === 'ai') return ((message as AIMessage).tool_calls?.length ?? 0) > 0 ? undefined : 'assistant';
  return undefined;
}

function newestWithin(turns: ConversationTurn[], maxChars: number): ConversationTurn[] {
  const kept: ConversationTurn[] = [];
  let total = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as ConversationTurn;
    if (total + turn.content.length > maxChars) {
      if (kept.length === 0) kept.push({ role: turn.role, content: `${turn.content.slice(0, maxChars - 1)}…` });
      break;
    }
    kept.push(turn);
    total += turn.content.length;
  }
  return kept.reverse();
}
