import type { AIMessageChunk } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import type { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { modelConfigSchema } from '../../../src/agent/config.js';
import { createChatModel, ModelStreamCutOffError } from '../../../src/agent/models.js';
import { FakeOpenAI } from '../../fakes/openai/index.js';

let fake: FakeOpenAI;
let model: ChatOpenAI;

beforeAll(async () => {
  fake = new FakeOpenAI({ apiKey: 'sk-test' });
  await fake.start();
  model = createChatModel({ name: 'default', model: 'gpt-4o-mini', base_url: fake.baseURL, api_key: 'sk-test', timeout_seconds: 10, max_retries: 0 });
});
afterAll(() => fake.stop());

/** Streams one answer; resolves with the merged chunks and the error that ended it, if any. */
async function streamAnswer(runnable: Pick<ChatOpenAI, 'stream'>, signal?: AbortSignal) {
  let merged: AIMessageChunk | undefined;
  try {
    for await (const chunk of await runnable.stream('hi', { signal })) merged = merged ? merged.concat(chunk) : chunk;
    return { merged, error: undefined };
  } catch (error) {
    return { merged, error };
  }
}

describe('createChatModel', () => {
  it('streams a whole answer whose finish reason comes before the usage chunk', async () => {
    fake.enqueue({ chunks: ['The ', 'answer.'], usage: { prompt_tokens: 3, completion_tokens: 2 } });

    const { merged, error } = await streamAnswer(model);

    expect(error).toBeUndefined();
    expect(merged?.text).toBe('The answer.');
    expect(merged?.usage_metadata).toMatchObject({ input_tokens: 3, output_tokens: 2 });
    expect(fake.requests.at(-1)?.body).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('fails a stream that ends without a finish reason, after passing on what arrived', async () => {
    fake.enqueue({ chunks: ['one ', 'two ', 'three'], endAfterChunks: 2 });

    const { merged, error } = await streamAnswer(model);

    expect(merged?.text).toBe('one two ');
    expect(error).toBeInstanceOf(ModelStreamCutOffError);
    expect(error).toMatchObject({ code: 'MODEL_FAILED' });
  });

  it('asks once more when a stream ends without a finish reason before any text arrived', async () => {
    const asked = fake.requests.length;
    fake.enqueue({ chunks: ['never shown'], endAfterChunks: 0 }, { chunks: ['The ', 'second try.'] });

    const { merged, error } = await streamAnswer(model);

    expect(error).toBeUndefined();
    expect(merged?.text).toBe('The second try.');
    expect(fake.requests.length - asked).toBe(2);
  });

  it('asks once more when a stream breaks before any text arrived, and no more than once', async () => {
    const asked = fake.requests.length;
    fake.enqueue({ chunks: ['never shown'], failAfterChunks: 0 }, { chunks: ['never shown either'], endAfterChunks: 0 });

    const { merged, error } = await streamAnswer(model);

    expect(merged?.text ?? '').toBe('');
    expect(error).toBeInstanceOf(ModelStreamCutOffError);
    expect(fake.requests.length - asked).toBe(2);
  });

  it('keeps the check once tools are bound, and lets a whole tool-call turn through', async () => {
    const getStatus = tool(async () => 'ok', { name: 'get_status', description: 'Health of a service', schema: z.object({ service: z.string() }) });
    const withTools = model.bindTools([getStatus]);
    fake.enqueue({ toolCalls: [{ name: 'get_status', args: { service: 'api' } }] }, { chunks: ['Checking ', 'the api'], endAfterChunks: 1 });

    const toolTurn = await streamAnswer(withTools);
    expect(toolTurn.error).toBeUndefined();
    expect(toolTurn.merged?.tool_call_chunks?.[0]).toMatchObject({ name: 'get_status', args: '{"service":"api"}' });

    const cut = await streamAnswer(withTools);
    expect(cut.merged?.text).toBe('Checking ');
    expect(cut.error).toBeInstanceOf(ModelStreamCutOffError);
  });

  it("tells the endpoint a model's thinking state with every request, as thinking_request spells it", async () => {
    const config = modelConfigSchema.parse({
      name: 'qwen3',
      model: 'qwen3-32b',
      base_url: fake.baseURL,
      api_key: 'sk-test',
      max_retries: 0,
      thinking: 'off',
      thinking_request: { on: { chat_template_kwargs: { enable_thinking: true } }, off: { chat_template_kwargs: { enable_thinking: false } } },
    });
    await streamAnswer(createChatModel(config));
    expect(fake.requests.at(-1)?.body).toMatchObject({ model: 'qwen3-32b', chat_template_kwargs: { enable_thinking: false } });
    await streamAnswer(model);
    expect(fake.requests.at(-1)?.body).not.toHaveProperty('chat_template_kwargs');
  });

  it.each([
    ['thinking without the request for its state', { thinking: 'on', thinking_request: { off: { enable_thinking: false } } }],
    ['thinking without any request', { thinking: 'off' }],
    ['a state other than on or off', { thinking: 'maybe', thinking_request: { on: {} } }],
  ])('refuses %s at config load', (_case, fields) => {
    expect(modelConfigSchema.safeParse({ name: 'm', model: 'm', ...fields }).success).toBe(false);
  });

  it('reads YAML booleans as on and off', () => {
    expect(modelConfigSchema.parse({ name: 'm', model: 'm', thinking: false, thinking_request: { off: { think: false } } }).thinking).toBe('off');
  });

  it('answers invoke() without streaming, finish reason included', async () => {
    const answer = await model.invoke('ping');

    expect(answer.text).toBe('Echo: ping');
    expect(answer.response_metadata.finish_reason).toBe('stop');
    expect(fake.requests.at(-1)?.stream).toBe(false);
  });

  it('reports a cancelled stream as cancelled, not as cut off', async () => {
    fake.enqueue({ chunks: Array.from({ length: 20 }, (_, i) => `w${i} `), chunkDelayMs: 20 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);

    const { error } = await streamAnswer(model, controller.signal);

    expect(error).toBeDefined();
    expect(error).not.toBeInstanceOf(ModelStreamCutOffError);
  });
});
