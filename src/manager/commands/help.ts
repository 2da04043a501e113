import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

export const helpCommand: Command = {
  name: 'help',
  usage: '/help',
  description: 'Show this help',
  async run({ commands }) {
    const lines = commands.map((command) => `${command.usage} — ${command.description}`);
    return { reply: [MESSAGES.helpHeader, ...lines].join('\n') };
  },
};
