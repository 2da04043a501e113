import { DEFAULT_AGENT_NAME } from '../../agent/prompt.js';
import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

/** `/agent default` goes back to the chat's default agent, whatever it is. */
const DEFAULT_WORD = 'default';

/**
 * `/agent` lists the agents the sender may talk to and says which one answers now; `/agent <name>`
 * switches the conversation to that agent in a new conversation (a persona starts clean: its
 * own thread, its own memory); `/agent default` returns to the chat's default agent.
 */
export const agentCommand: Command = {
  name: 'agent',
  usage: '/agent [name]',
  description: 'List the agents you can talk to, or switch to one',
  async run({ message, args, userId, threads, agents, currentAgent, defaultAgent }) {
    const available = [{ name: DEFAULT_AGENT_NAME, description: MESSAGES.defaultAgentDescription }, ...((await agents?.availableTo(userId)) ?? [])];
    const current = currentAgent ?? DEFAULT_AGENT_NAME;
    if (args === '') return { reply: MESSAGES.agentList(current, available) };
    const wanted = args.trim().toLowerCase().replaceAll('_', '-');
    if (wanted === DEFAULT_WORD) {
      await threads.startNew(message, { agentName: undefined });
      return { reply: MESSAGES.agentSwitched(defaultAgent ?? DEFAULT_AGENT_NAME, available.find((agent) => agent.name === (defaultAgent ?? DEFAULT_AGENT_NAME))?.description ?? '') };
    }
    const chosen = available.find((agent) => agent.name === wanted);
    if (chosen === undefined) return { reply: MESSAGES.agentUnavailable(args.trim(), available.map((agent) => agent.name)) };
    await threads.startNew(message, { agentName: chosen.name });
    return { reply: MESSAGES.agentSwitched(chosen.name, chosen.description) };
  },
};
