import type { InboundMessage } from '../../channel/types.js';
import type { AgentRuntime } from '../../runtime/types.js';
import type { ScheduleBook } from '../../schedules/book.js';
import type { ThreadResolver } from '../threads.js';

/** The custom agents people may choose in chat, and whether new ones can be made (`/bootstrap`). */
export interface AgentChoices {
  /** The custom agents `userId` (a storage user id) may choose with `/agent`. */
  availableTo(userId: string): Promise<{ name: string; description: string }[]>;
  /** Whether agents made in chat can be saved: `agents.dir` names a folder the server writes to. */
  readonly canCreate: boolean;
}

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
  /** The agent the conversation talks to now: chosen with `/agent`, else the chat's or channel's default; undefined = the default agent. */
  currentAgent: string | undefined;
  /** The chat's or channel's default agent (`channels.default_agents`); undefined = the default agent. */
  defaultAgent: string | undefined;
  /** Custom agents to choose from; absent = only the default agent. */
  agents?: AgentChoices | undefined;
  /** The sender may use what only trusted senders may (the shell, setting up agents). */
  isTrustedSender: boolean;
  /** The schedules people keep (`/schedule`); absent = schedules are off. */
  schedules?: ScheduleBook | undefined;
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
