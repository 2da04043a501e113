import { ChatOpenAI } from '@langchain/openai';
import type { ModelConfig } from './config.js';

/**
 * A chat model for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...).
 * Streaming usage is requested so every run records its token counts.
 */
export function createChatModel(config: ModelConfig): ChatOpenAI {
  return new ChatOpenAI({
    model: config.model,
    // Local endpoints accept any key; the OpenAI client refuses to start without one.
    apiKey: config.api_key ?? 'not-needed',
    configuration: config.base_url ? { baseURL: config.base_url } : {},
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxTokens: config.max_tokens }),
    timeout: config.timeout_seconds * 1000,
    maxRetries: config.max_retries,
    streamUsage: true,
  });
}
