import { z } from 'zod';

export const modelConfigSchema = z.strictObject({
  name: z.string().min(1).describe('Name users see in /models and pass as model_name.'),
  model: z.string().min(1).describe('Model id sent to the endpoint, e.g. gpt-4o-mini.'),
  base_url: z.url().optional().describe('OpenAI-compatible endpoint; absent means OpenAI.'),
  api_key: z.string().optional().describe('Bearer key for the endpoint; usually $OPENAI_API_KEY.'),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  timeout_seconds: z.number().positive().default(120).describe('Per-request timeout.'),
  max_retries: z.number().int().nonnegative().default(2).describe('Retries on 429/5xx by the OpenAI client.'),
});

export const modelsConfigSchema = z
  .array(modelConfigSchema)
  .default([])
  .refine((models) => new Set(models.map((m) => m.name)).size === models.length, 'model names must be unique');

export type ModelConfig = z.infer<typeof modelConfigSchema>;
