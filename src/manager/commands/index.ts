import { agentCommand } from './agent.js';
import { bootstrapCommand } from './bootstrap.js';
import { goalCommand } from './goal.js';
import { helpCommand } from './help.js';
import { memoryCommand } from './memory.js';
import { modelsCommand } from './models.js';
import { newCommand } from './new.js';
import { scheduleCommand } from './schedule.js';
import { statusCommand } from './status.js';
import type { Command } from './types.js';

export type { AgentChoices, Command, CommandContext, CommandResult } from './types.js';

/** Every chat command, in the order `/help` lists them (reference §5.2). */
export const builtinCommands: readonly Command[] = [
  bootstrapCommand,
  goalCommand,
  scheduleCommand,
  newCommand,
  statusCommand,
  agentCommand,
  modelsCommand,
  memoryCommand,
  helpCommand,
];

export interface ParsedCommand {
  /** Lowercased first token minus one leading `/`; undefined for a blank command. */
  name: string | undefined;
  args: string;
  /** False when the raw text did not start with `/`: such a command is always unknown. */
  isWellFormed: boolean;
}

/**
 * Reference §5.1: the raw text must start with `/` (a leading space makes it unknown), the name is
 * the first token lowercased minus one `/` (so `//help` is unknown).
 */
export function parseCommand(text: string): ParsedCommand {
  const trimmed = text.trim();
  if (trimmed === '') return { name: undefined, args: '', isWellFormed: false };
  const match = /^(\S+)\s*([\s\S]*)$/.exec(trimmed) as RegExpExecArray;
  const token = (match[1] as string).toLowerCase();
  return {
    name: token.startsWith('/') ? token.slice(1) : token,
    args: (match[2] as string).trim(),
    isWellFormed: text.startsWith('/'),
  };
}
