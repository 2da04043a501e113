import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

export const newCommand: Command = {
  name: 'new',
  usage: '/new',
  description: 'Start a new conversation',
  async run({ message, threads }) {
    await threads.startNew(message);
    return { reply: MESSAGES.newConversation };
  },
};
