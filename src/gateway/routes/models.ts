import { z } from 'zod';
import type { AgentRuntime } from '../../runtime/types.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const modelsResponseSchema = z.object({ models: z.array(z.object({ name: z.string(), model: z.string() })) });

/** `GET /models` (at `/api`): the configured models by name; endpoints and keys never leave. */
export const modelRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.get('/models', { schema: { response: { 200: modelsResponseSchema, ...errorResponses } } }, async () => ({
    models: runtime.models().map(({ name, model }) => ({ name, model })),
  }));
};
