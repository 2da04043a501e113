import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FakeOpenAI } from '../../fakes/openai/index.js';

const API_KEY = 'sk-test';
let fake: FakeOpenAI;

beforeEach(async () => {
  fake = new FakeOpenAI({ apiKey: API_KEY });
  await fake.start();
});
afterEach(() => fake.stop());

function model(apiKey = API_KEY): ChatOpenAI {
  return new ChatOpenAI({ model: 'gpt-4o-mini', apiKey, configuration: { baseURL: fake.baseURL }, maxRetries: 0 });
}

describe('FakeOpenAI with ChatOpenAI', () => {
  it('streams the scripted deltas in order, then usage', async () => {
    fake.enqueue({ chunks: ['Hel', 'lo, ', 'world'], usage: { prompt_tokens: 5, completion_tokens: 3 } });

    let merged: AIMessageChunk | undefined;
    const deltas: string[] = [];
    for await (const chunk of await model().stream('hi')) {
      if (chunk.content !== '') deltas.push(chunk.text);
      merged = merged ? merged.concat(chunk) : chunk;
    }

    expect(deltas).toEqual(['Hel', 'lo, ', 'world']);
    expect(merged?.usage_metadata).toMatchObject({ input_tokens: 5, output_tokens: 3, total_tokens: 8 });
    const [request] = await fake.waitForRequests(1);
    expect(request).toMatchObject({ stream: true, body: { stream_options: { include_usage: true } } });
  });

  it('answers invoke() with one completion, echoing by default, with usage from the text length', async () => {
    const answer = await model().invoke('ping');

    expect(answer.text).toBe('Echo: ping');
    expect(answer.usage_metadata).toMatchObject({ input_tokens: 1, output_tokens: 3, total_tokens: 4 });
    expect(fake.requests[0]).toMatchObject({ stream: false, messages: [{ role: 'user', content: 'ping' }] });
  });

  it('surfaces a scripted 500 as an error', async () => {
    fake.enqueue({ fail: { status: 500, message: 'model overloaded' } });

    await expect(model().invoke('hi')).rejects.toMatchObject({ status: 500, message: expect.stringContaining('model overloaded') });
  });

  it('breaks the stream after failAfterChunks content deltas', async () => {
    fake.enqueue({ chunks: ['one ', 'two ', 'three'], failAfterChunks: 2 });

    const received: string[] = [];
    const consume = async () => {
      for await (const chunk of await model().stream('hi')) received.push(chunk.text);
    };

    await expect(consume()).rejects.toThrow();
    expect(received.join('')).toBe('one two ');
  });

  it('ends the stream cleanly after endAfterChunks content deltas, with no finish reason: the bare client takes it as whole', async () => {
    fake.enqueue({ chunks: ['one ', 'two ', 'three'], endAfterChunks: 2 });

    let merged: AIMessageChunk | undefined;
    for await (const chunk of await model().stream('hi')) merged = merged ? merged.concat(chunk) : chunk;

    expect(merged?.text).toBe('one two ');
    expect(merged?.response_metadata.finish_reason).toBeUndefined();
  });

  it('rejects a wrong API key with 401 in OpenAI error shape', async () => {
    await expect(model('sk-wrong').invoke('hi')).rejects.toMatchObject({ status: 401 });

    const response = await fetch(`${fake.baseURL}/models`, { headers: { authorization: 'Bearer sk-wrong' } });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
    expect(fake.requests).toHaveLength(0);
  });

  it('lists models', async () => {
    const response = await fetch(`${fake.baseURL}/models`, { headers: { authorization: `Bearer ${API_KEY}` } });

    expect(await response.json()).toMatchObject({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] });
  });
});

describe('FakeOpenAI with a LangGraph ReAct agent', () => {
  const getStatus = tool(async ({ service }) => `${service}: healthy`, {
    name: 'get_status',
    description: 'Health of a service',
    schema: z.object({ service: z.string() }),
  });

  /** One user turn streamed with messages + values; returns what each node streamed and the final state. */
  async function runTurn(agent: ReturnType<typeof createReactAgent>, threadId: string, text: string) {
    const streamed: { node: string; message: BaseMessage }[] = [];
    let final: BaseMessage[] = [];
    const stream = await agent.stream(
      { messages: [{ role: 'user', content: text }] },
      { configurable: { thread_id: threadId }, streamMode: ['messages', 'values'], recursionLimit: 10 },
    );
    for await (const [mode, payload] of stream) {
      if (mode === 'messages') {
        const [message, metadata] = payload as [BaseMessage, { langgraph_node: string }];
        streamed.push({ node: metadata.langgraph_node, message });
      } else {
        final = (payload as { messages: BaseMessage[] }).messages;
      }
    }
    return { streamed, final };
  }

  function scriptToolTurn(): void {
    fake.enqueue(
      { toolCalls: [{ name: 'get_status', args: { service: 'api' } }] },
      { chunks: ['The ', 'api ', 'is ', 'healthy.'] },
    );
  }

  it('streams tool-call chunks, the tool result and the final answer', async () => {
    const agent = createReactAgent({ llm: model(), tools: [getStatus], checkpointer: new MemorySaver() });
    scriptToolTurn();

    const { streamed, final } = await runTurn(agent, 't1', 'Is the api up?');

    const fromAgent = streamed.filter((s) => s.node === 'agent').map((s) => s.message);
    expect(fromAgent.every((m) => m instanceof AIMessageChunk)).toBe(true);
    expect(fromAgent.some((m) => (m as AIMessageChunk).tool_call_chunks?.length)).toBe(true);
    expect(streamed.find((s) => s.node === 'tools')?.message.content).toBe('api: healthy');
    expect(fromAgent.map((m) => m.text).join('')).toBe('The api is healthy.');
    expect(final.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(final.at(-1)?.text).toBe('The api is healthy.');

    const [, second] = await fake.waitForRequests(2);
    expect(second?.tools).toHaveLength(1);
    expect(second?.messages.at(-1)).toMatchObject({ role: 'tool', content: 'api: healthy' });
  });

  it('runs two tool turns on one thread without looping (unique tool-call ids)', async () => {
    const agent = createReactAgent({ llm: model(), tools: [getStatus], checkpointer: new MemorySaver() });
    scriptToolTurn();
    scriptToolTurn();

    await runTurn(agent, 't2', 'Is the api up?');
    const { final } = await runTurn(agent, 't2', 'And now?');

    expect(final.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'ai', 'human', 'ai', 'tool', 'ai']);
    expect(fake.requests).toHaveLength(4);
    const toolCallIds = fake.requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id));
    expect(new Set(toolCallIds).size).toBe(2);
  });

  it('refuses a tool message without its call, and a call without its result, as OpenAI does', async () => {
    const call = new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'lookup', args: {} }] });
    const result = new ToolMessage({ content: 'found', tool_call_id: 'call_1', name: 'lookup' });
    await expect(model().invoke([new HumanMessage('hi'), result])).rejects.toThrow(/must be a response to a preceeding message with 'tool_calls'/);
    await expect(model().invoke([new HumanMessage('hi'), call, new HumanMessage('next')])).rejects.toThrow(/must be followed by tool messages/);
    await expect(model().invoke([new HumanMessage('hi'), call, result, new HumanMessage('next')])).resolves.toBeDefined();
  });
});
