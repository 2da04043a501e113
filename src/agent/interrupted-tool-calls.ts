import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';

/** What the model reads for a tool call that never got its result. */
export const INTERRUPTED_TOOL_RESULT =
  'Interrupted: the server stopped before this tool call finished. It may or may not have taken effect; check before doing it again.';

/**
 * The thread's messages as the model must see them: every tool call followed by its result. A
 * run that a crash or a shutdown cut short mid-tool leaves a call without one in the checkpoint,
 * and the run that takes the thread up again would be refused by the model's API (OpenAI: "an
 * assistant message with 'tool_calls' must be followed by tool messages"). Each missing result is
 * given the interrupted note, right after the calls' message; the checkpoint itself is not
 * changed. Returns `messages` itself when nothing is missing (the common case costs one pass).
 */
export function withInterruptedToolCallsClosed(messages: BaseMessage[]): BaseMessage[] {
  let closed: BaseMessage[] | undefined;
  for (const [i, message] of messages.entries()) {
    const missing = unansweredCalls(messages, i);
    if (missing.length === 0) {
      closed?.push(message);
      continue;
    }
    closed ??= messages.slice(0, i);
    closed.push(message, ...missing.map((call) => new ToolMessage({ tool_call_id: call.id, name: call.name, content: INTERRUPTED_TOOL_RESULT })));
  }
  return closed ?? messages;
}

/** The tool calls of `messages[i]` (when it is an AI message) that no tool message right after it answers. */
function unansweredCalls(messages: BaseMessage[], i: number): { id: string; name: string }[] {
  const message = messages[i];
  if (!AIMessage.isInstance(message) || !message.tool_calls?.length) return [];
  const answered = new Set<string>();
  for (let j = i + 1; j < messages.length; j++) {
    const next = messages[j];
    if (!ToolMessage.isInstance(next)) break;
    answered.add(next.tool_call_id);
  }
  return message.tool_calls.flatMap((call) => (call.id !== undefined && !answered.has(call.id) ? [{ id: call.id, name: call.name }] : []));
}
