import { memoryOwnerOf } from '../../agent/memory/owner.js';
import { literalMarkdown } from '../../channel/markdown-syntax.js';
import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

/** Facts listed in chat at most; the count always covers all of them. */
const MAX_LISTED_FACTS = 30;

/**
 * `/memory` says how many facts the server keeps about the sender and lists them; `/memory
 * clear` forgets them all (a step beyond the reference, which can only count). With a custom
 * agent in the conversation (chosen with `/agent`, or the chat's default), it is the memory of
 * the sender and that agent (`memoryOwnerOf`).
 */
export const memoryCommand: Command = {
  name: 'memory',
  usage: '/memory [clear]',
  description: 'Show memory status',
  async run({ args, userId, message, runtime, currentAgent }) {
    const owner = memoryOwnerOf(userId, message.agentName ?? currentAgent);
    if (args.toLowerCase() === 'clear') {
      const removed = await runtime.clearMemory(owner).catch(() => undefined);
      return { reply: removed === undefined ? MESSAGES.memoryClearFailed : MESSAGES.memoryCleared(removed) };
    }
    const memory = await runtime.getMemory(owner).catch(() => undefined);
    if (!memory) return { reply: MESSAGES.memoryFetchFailed };
    const facts = [...memory.facts].sort((a, b) => b.confidence - a.confidence);
    const lines = facts.slice(0, MAX_LISTED_FACTS).map((fact) => `• ${literalMarkdown(fact.content)}`);
    if (facts.length > MAX_LISTED_FACTS) lines.push(MESSAGES.moreFacts(facts.length - MAX_LISTED_FACTS));
    return { reply: [MESSAGES.memoryCount(facts.length), ...lines].join('\n') };
  },
};
