import { SUMMARY_PROMPT_OPENING } from '../../src/agent/context/summarizer.js';
import { type FakeChatRequest, type FakeReply, messageText } from '../fakes/openai/index.js';

/** The codes the long-conversation tests have a person give, one a turn: `K1X`, `K2X`, … */
export const CODE = /\bK\d+X\b/g;

/** True for a request from the server's summariser (src/agent/context/summarizer.ts). */
export function isSummaryRequest(request: FakeChatRequest): boolean {
  const first = request.messages[0];
  return first !== undefined && messageText(first).startsWith(SUMMARY_PROMPT_OPENING);
}

/** A faithful summariser's answer: every code it reads, in the summary so far and in the new messages. */
export function summaryOfCodes(request: FakeChatRequest): FakeReply {
  const input = request.messages[1];
  const codes = new Set(input === undefined ? [] : (messageText(input).match(CODE) ?? []));
  return { text: `Codes the person gave: ${[...codes].join(', ')}.` };
}

/** The chat model's answer to `What was the code for item N?`, from whatever its request holds. */
export function answerFromRequest(request: FakeChatRequest, item: string): FakeReply {
  const code = `K${item}X`;
  const known = request.messages.some((message) => messageText(message).includes(code));
  return { text: known ? `The code for item ${item} was ${code}.` : `I do not know the code for item ${item}.` };
}
