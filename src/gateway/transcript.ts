import { textOf } from '../manager/response.js';

/** One line of a conversation as the console shows it. */
export interface TranscriptEntry {
  role: 'user' | 'assistant' | 'tool';
  text: string;
  /** When it was said, where the message records it (state messages carry no time today). */
  at?: string;
}

type MessageDict = Record<string, unknown>;

function asDict(value: unknown): MessageDict | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as MessageDict) : undefined;
}

/**
 * A thread's state messages (LangGraph message dicts) as the person saw the conversation: their
 * messages (as they typed them, without the server's notes), the agent's answers, and each tool
 * the agent called, by name only (arguments and results can hold anything). Messages the server
 * made for the agent (`additional_kwargs.hide_from_ui`: summaries, goal continuations) and system
 * messages are left out. Pure.
 */
export function toTranscript(messages: unknown): TranscriptEntry[] {
  if (!Array.isArray(messages)) return [];
  const entries: TranscriptEntry[] = [];
  for (const value of messages) {
    const message = asDict(value);
    if (message === undefined) continue;
    const kwargs = asDict(message.additional_kwargs);
    if (message.type === 'human') {
      if (kwargs?.hide_from_ui === true) continue;
      const original = kwargs?.original_user_content;
      entries.push({ role: 'user', text: typeof original === 'string' ? original : textOf(message) });
    } else if (message.type === 'ai') {
      const text = textOf(message);
      if (text !== '') entries.push({ role: 'assistant', text });
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      for (const call of calls) {
        const name = asDict(call)?.name;
        if (typeof name === 'string') entries.push({ role: 'tool', text: name });
      }
    }
  }
  return entries;
}
