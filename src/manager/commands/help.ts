import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

/** Reference §5.2: every command, then how to activate a skill, then `/help` itself. */
export const helpCommand: Command = {
  name: 'help',
  usage: '/help',
  description: 'Show this help',
  async run({ commands }) {
    const line = (command: Command) => `${command.usage} — ${command.description}`;
    const others = commands.filter((command) => command.name !== 'help').map(line);
    return { reply: [MESSAGES.helpHeader, ...others, MESSAGES.skillHelpLine, line(helpCommand)].join('\n') };
  },
};
