import type { InboundMessage } from '../../channel/types.js';
import type { AgentRuntime } from '../../runtime/types.js';
import type { ThreadResolver } from '../threads.js';

export interface CommandContext {
  message: InboundMessage;
  /** Text after the command word, trimmed. */
  args: string;
  /** Whose memory and files the command reads: the storage user id of the sender. */
  userId: string;
  threads: ThreadResolver;
  runtime: AgentRuntime;
  /** Every registered command, for `/help`. */
  commands: readonly Command[];
}

/** A reply to send, or a chat turn to run instead (for commands like `/bootstrap`). */
export type CommandResult = { reply: string } | { runAsChat: { text: string; context?: Record<string, unknown> } };

export interface Command {
  /** Lowercase, without `/`. */
  name: string;
  /** How `/help` shows it, e.g. `/goal [condition|clear]`. */
  usage: string;
  description: string;
  run(context: CommandContext): Promise<CommandResult>;
}
