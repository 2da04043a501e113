import { z } from 'zod';

/** Fields merged into a model's request body, as its endpoint spells them (JSON). */
const requestFieldsSchema = z.record(z.string(), z.json());

export const modelConfigSchema = z
  .strictObject({
  name: z.string().min(1).describe('Name users see in /models and pass as model_name.'),
  model: z.string().min(1).describe('Model id sent to the endpoint, e.g. gpt-4o-mini.'),
  base_url: z.url().optional().describe('OpenAI-compatible endpoint; absent means OpenAI.'),
  api_key: z.string().optional().describe('Bearer key for the endpoint; usually $OPENAI_API_KEY.'),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  supports_vision: z
    .boolean()
    .optional()
    .describe('The model reads pictures: photos people send reach it as images, and it gets the view_image tool. Absent: false.'),
  context_window: z
    .number()
    .int()
    .min(1024)
    .optional()
    .describe('Tokens the model reads in one request. With it, a conversation nearing the window is summarised (summarization:); without it, never.'),
  timeout_seconds: z.number().positive().default(120).describe('Per-request timeout.'),
  max_retries: z.number().int().nonnegative().default(2).describe('Retries on 429/5xx by the OpenAI client.'),
  thinking: z
    .union([z.enum(['on', 'off']), z.boolean().transform((on) => (on ? 'on' : 'off'))])
    .optional()
    .describe('Whether a reasoning model thinks before it answers; absent: as its endpoint decides. Needs thinking_request for the state chosen.'),
  thinking_request: z
    .strictObject({ on: requestFieldsSchema.optional(), off: requestFieldsSchema.optional() })
    .optional()
    .describe(
      'How the endpoint is told: fields merged into every request body for each state, e.g. { off: { chat_template_kwargs: { enable_thinking: false } } } for Qwen3 on vLLM.',
    ),
})
  .refine((model) => model.thinking === undefined || model.thinking_request?.[model.thinking] !== undefined, {
    message: 'thinking is set, but thinking_request says nothing for that state: add the fields the endpoint needs (e.g. thinking_request.off)',
    path: ['thinking_request'],
  });

export const modelsConfigSchema = z
  .array(modelConfigSchema)
  .default([])
  .refine((models) => new Set(models.map((m) => m.name)).size === models.length, 'model names must be unique');

export type ModelConfig = z.infer<typeof modelConfigSchema>;
