import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk } from '@langchain/core/outputs';
import { ChatOpenAI, ChatOpenAICompletions, type ChatOpenAIFields } from '@langchain/openai';
import { AgentError } from '../errors.js';
import type { ModelConfig } from './config.js';

/** A streamed answer ended without a finish reason: what arrived is only the start of it. */
export class ModelStreamCutOffError extends AgentError {
  constructor() {
    super('MODEL_FAILED', 'model stream ended without a finish reason', {
      status: 502,
      userMessage: 'The model stopped before it finished its answer. Please try again.',
    });
    this.name = 'ModelStreamCutOffError';
  }
}

/**
 * Chat Completions that refuse a stream ending without a finish reason. Every complete answer
 * ends with one (`stop`, `length`, `tool_calls`, ...), possibly before a usage-only chunk; a
 * stream that a proxy or a failing server closes early ends just as cleanly (with or without
 * `[DONE]`), and the client would return the partial text as the whole answer (issue #15).
 * Cut off before any text or tool call arrived, the call is made once more. Non-streamed answers
 * need no check: they arrive whole or not at all.
 */
class FinishedStreamCompletions extends ChatOpenAICompletions {
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    for (let attempt = 1; ; attempt++) {
      let hasStarted = false;
      let hasFinishReason = false;
      let hasOutput = false;
      let broke: unknown;
      try {
        for await (const chunk of super._streamResponseChunks(messages, options, runManager)) {
          hasStarted = true;
          if (chunk.generationInfo?.finish_reason != null) hasFinishReason = true;
          if (chunk.text !== '' || (chunk.message as AIMessageChunk).tool_call_chunks?.length) hasOutput = true;
          yield chunk;
        }
      } catch (error) {
        broke = error;
      }
      // A cancelled call also ends early; the caller reports it as cancelled, not as a model fault.
      if (options.signal?.aborted) {
        if (broke !== undefined) throw broke;
        return;
      }
      if (hasFinishReason && broke === undefined) return;
      // A stream cut off (cleanly, or broken after it began) before a word or a tool call arrived:
      // nothing was shown, so one more try doubles nothing (issue #15). A request the endpoint
      // refused never began; the client's own retries (`max_retries`) have had their say.
      const isCutOff = broke === undefined || hasStarted;
      if (isCutOff && !hasOutput && attempt === 1) continue;
      throw broke ?? new ModelStreamCutOffError();
    }
  }
}

/**
 * A chat model for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...).
 * Streaming usage is requested so every run records its token counts. A stream that ends
 * without a finish reason fails with {@link ModelStreamCutOffError}.
 */
export function createChatModel(config: ModelConfig): ChatOpenAI {
  const fields: ChatOpenAIFields = {
    model: config.model,
    // Local endpoints accept any key; the OpenAI client refuses to start without one.
    apiKey: config.api_key ?? 'not-needed',
    configuration: config.base_url ? { baseURL: config.base_url } : {},
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.max_tokens === undefined ? {} : { maxTokens: config.max_tokens }),
    timeout: config.timeout_seconds * 1000,
    maxRetries: config.max_retries,
    streamUsage: true,
    // Thinking on or off, as the endpoint spells it: merged into every request's body.
    ...(config.thinking === undefined ? {} : { modelKwargs: config.thinking_request?.[config.thinking] ?? {} }),
  };
  // Given as a field, the guarded client survives `bindTools`, which copies the model from its fields.
  return new ChatOpenAI({ ...fields, completions: new FinishedStreamCompletions(fields) });
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
