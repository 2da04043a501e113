import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AgentOverview } from '../../agent/agent-overview.js';
import { requireOperator } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const agentSchema = z.object({
  name: z.string(),
  description: z.string(),
  model: z.string().nullable(),
  skills: z.array(z.string()).nullable(),
  tools: z.array(z.string()).nullable(),
  enabled: z.boolean(),
  in_chat: z.boolean(),
  github_bindings: z.array(z.object({ repo: z.string(), events: z.array(z.string()) })),
  problem: z.string().nullable(),
});

function toAgentJson(agent: AgentOverview): z.infer<typeof agentSchema> {
  return {
    name: agent.name,
    description: agent.description,
    model: agent.model,
    skills: agent.skills,
    tools: agent.tools,
    enabled: agent.isEnabled,
    in_chat: agent.isInChat,
    github_bindings: agent.bindings,
    problem: agent.problem,
  };
}

/** Before the query is read: a user's key gets 403 whatever it asks. */
async function operatorOnly(request: FastifyRequest): Promise<void> {
  if (request.principal?.kind === 'user') requireOperator(request);
}

/**
 * `GET /agents` (at `/api`), for the operator: every agent of the agents folder with what its
 * config.yaml sets (model, skills, tools) and its GitHub bindings (repository, events), read at
 * each call. Agents a person made with `/bootstrap` are listed too: the folder is the operator's.
 */
export const agentRoutes: ZodPluginAsync<{ list: () => Promise<AgentOverview[]> }> = async (app, { list }) => {
  app.get(
    '/agents',
    {
      onRequest: operatorOnly,
      schema: { querystring: z.strictObject({}), response: { 200: z.object({ agents: z.array(agentSchema) }), ...errorResponses } },
    },
    async () => ({ agents: (await list()).map(toAgentJson) }),
  );
};
