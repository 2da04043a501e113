import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

export const statusCommand: Command = {
  name: 'status',
  usage: '/status',
  description: 'Show current thread info',
  async run({ message, threads }) {
    const threadId = await threads.find(message);
    return { reply: threadId ? MESSAGES.activeThread(threadId) : MESSAGES.noConversation };
  },
};
