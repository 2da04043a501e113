import { ChatOpenAI } from '@langchain/openai';
import { AgentError } from '../errors.js';
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

/**
 * One client per configured model, shared by the agent's graphs, the goal evaluator and the
 * memory updater (a client holds no per-call state, so one per endpoint is enough).
 */
export class ChatModels {
  private readonly clients = new Map<string, ChatOpenAI>();

  constructor(private readonly configs: readonly ModelConfig[]) {}

  /**
   * The client of the model named `name`, else of the default (first) model.
   *
   * @throws AgentError `MODEL_NOT_CONFIGURED` when no model is configured.
   */
  get(name?: string): ChatOpenAI {
    const config = this.configs.find((model) => model.name === name) ?? this.configs[0];
    if (!config) throw new AgentError('MODEL_NOT_CONFIGURED', 'no model configured', { status: 503 });
    let client = this.clients.get(config.name);
    if (!client) {
      client = createChatModel(config);
      this.clients.set(config.name, client);
    }
    return client;
  }
}
