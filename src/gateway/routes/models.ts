import { z } from 'zod';
import type { AgentRuntime } from '../../runtime/types.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const modelsResponseSchema = z.object({
  models: z.array(
    z.object({ name: z.string(), model: z.string(), thinking: z.enum(['on', 'off']).optional(), supports_vision: z.boolean().optional() }),
  ),
});

/** `GET /models` (at `/api`): the configured models by name, and whether each thinks where that is set; endpoints and keys never leave. */
export const modelRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.get('/models', { schema: { response: { 200: modelsResponseSchema, ...errorResponses } } }, async () => ({
    models: runtime.models().map(({ name, model, thinking, supports_vision }) => ({
      name,
      model,
      ...(thinking === undefined ? {} : { thinking }),
      ...(supports_vision === true ? { supports_vision } : {}),
    })),
  }));
};
