import { z } from 'zod';
import { AGENT_NAME } from '../agent/catalog.js';

/** The keys of `channels:` that decide who answers a conversation. */
export const conversationConfigShape = {
  default_agents: z
    .record(
      z.string().regex(/^[a-z0-9-]+(?:\/.+)?$/, 'a channel name (telegram), or a channel and a chat id (telegram/-1001234)'),
      z.string().regex(AGENT_NAME, 'an agent name: lowercase letters, digits and hyphens'),
    )
    .default({})
    .describe(
      'The agent that answers a channel (key: telegram) or one chat (key: telegram/<chat id>) until someone chooses another with /agent; absent: the default agent.',
    ),
};
