import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

/** What the agent is told when `/bootstrap` comes without text (reference §5.2). */
const DEFAULT_BOOTSTRAP_TEXT = 'Initialize workspace';

/**
 * `/bootstrap [text]` (reference §5.2) starts a new conversation in agent-setup mode: the agent
 * interviews the person and saves a custom agent (its `SOUL.md`) with `setup_agent`. The mode
 * lasts until `/new` or `/agent`, so the person can answer the agent's questions in plain
 * messages. Only trusted senders may, and only where agents can be saved (`agents.dir`).
 */
export const bootstrapCommand: Command = {
  name: 'bootstrap',
  usage: '/bootstrap',
  description: 'Start a bootstrap session (enables agent setup)',
  async run({ message, args, threads, agents, isTrustedSender, currentAgent }) {
    if (!isTrustedSender) return { reply: MESSAGES.bootstrapNotAllowed };
    if (agents?.canCreate !== true) return { reply: MESSAGES.bootstrapUnavailable };
    await threads.startNew(message, { agentName: currentAgent, isBootstrapping: true });
    return { runAsChat: { text: args === '' ? DEFAULT_BOOTSTRAP_TEXT : args } };
  },
};
