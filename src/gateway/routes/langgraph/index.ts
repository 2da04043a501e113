import type { AgentRuntime } from '../../../runtime/types.js';
import { threadOwnershipCheck } from '../../thread-ownership.js';
import type { ZodPluginAsync } from '../../validation.js';
import { runRoutes } from './runs.js';
import { threadRoutes } from './threads.js';

/**
 * The LangGraph Platform API subset `@langchain/langgraph-sdk` speaks, served from the
 * `AgentRuntime` (mounted at `/api`, so the SDK's `apiUrl` is `<server>/api`). Encapsulated:
 * nothing here leaks to sibling routes.
 */
export const langGraphRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.addHook('preHandler', threadOwnershipCheck(runtime));
  await app.register(threadRoutes, { runtime });
  await app.register(runRoutes, { runtime });
};
