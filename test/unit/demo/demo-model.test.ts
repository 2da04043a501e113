import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateGoal } from '../../../src/agent/goals/evaluator.js';
import { buildExtractionMessages, parseMemoryUpdate } from '../../../src/agent/memory/extraction.js';
import { createChatModel } from '../../../src/agent/models.js';
import { buildSystemPrompt } from '../../../src/agent/prompt.js';
import { DEMO_MODEL_ID, DemoModelServer, textPieces } from '../../../src/demo/model-server.js';

/**
 * The demo model through the real `@langchain/openai` client the agent uses, answering the real
 * prompts the server builds (the agent's system prompt, the goal evaluator's, memory
 * extraction's), read back with the server's own parsers.
 */

let server: DemoModelServer;
let client: ReturnType<typeof createChatModel>;
const LABEL = '[demo model] ';

const TOOLS = ['read_file', 'write_file', 'present_files'].map((name) => ({
  type: 'function' as const,
  function: { name, description: name, parameters: { type: 'object', properties: {} } },
}));

function systemPrompt(uploads: Array<{ filename: string; size: number }> = []) {
  return new SystemMessage(
    buildSystemPrompt({
      soul: 'You are a helpful agent.',
      now: new Date('2026-01-01T00:00:00Z'),
      tools: ['read_file', 'write_file', 'present_files'],
      skills: '',
      activeSkill: '',
      memory: '',
      uploads: uploads.map((file) => ({ ...file, path: `/mnt/user-data/uploads/${file.filename}`, is_image: false })),
      canAskClarification: false,
    }),
  );
}

describe('the demo model', () => {
  beforeAll(async () => {
    server = new DemoModelServer({ chunkIntervalMs: 0 });
    const baseURL = await server.start();
    client = createChatModel({ name: 'demo', model: DEMO_MODEL_ID, base_url: baseURL, api_key: server.apiKey, timeout_seconds: 10, max_retries: 0 });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('streams a labelled answer in several pieces; the first of a conversation introduces the demo', async () => {
    const pieces: string[] = [];
    for await (const chunk of await client.stream([systemPrompt(), new HumanMessage('hello there')])) {
      if (chunk.text !== '') pieces.push(chunk.text);
    }
    const text = pieces.join('');
    expect(pieces.length).toBeGreaterThan(3);
    expect(text.startsWith(LABEL)).toBe(true);
    expect(text).toContain('"hello there"');
    expect(text).toContain('not a real AI');

    const later = await client.invoke([systemPrompt(), new HumanMessage('hello there'), new AIMessage(text), new HumanMessage('and now?')]);
    expect(later.text.startsWith(LABEL)).toBe(true);
    expect(later.text).not.toContain('not a real AI');
  });

  it('reads an uploaded file with read_file, then says its name, size and first line', async () => {
    const bound = client.bindTools(TOOLS);
    const asked = [systemPrompt([{ filename: 'list.txt', size: 12 }]), new HumanMessage('look at this')];
    const call = await bound.invoke(asked);
    expect(call.tool_calls?.map((c) => [c.name, c.args.path])).toEqual([['read_file', '/mnt/user-data/uploads/list.txt']]);
    const answer = await bound.invoke([...asked, call, new ToolMessage({ content: 'first line\nsecond', tool_call_id: call.tool_calls?.[0]?.id as string })]);
    expect(answer.text).toContain('list.txt (12 bytes)');
    expect(answer.text).toContain('"first line"');
    // A file that cannot be read as text is said so, in the tool's words.
    const binary = await bound.invoke([...asked, call, new ToolMessage({ content: 'Error: list.txt is a binary file (12 bytes)', tool_call_id: call.tool_calls?.[0]?.id as string })]);
    expect(binary.text).toContain('could not read it as text: list.txt is a binary file');
  });

  it('writes a file, then presents it, then says so, one step at a time', async () => {
    const bound = client.bindTools(TOOLS);
    const messages: BaseMessage[] = [systemPrompt(), new HumanMessage('can you make me a file?')];
    const write = await bound.invoke(messages);
    expect(write.tool_calls?.map((c) => [c.name, c.args.path])).toEqual([['write_file', '/mnt/user-data/outputs/demo-note.md']]);
    expect(String(write.tool_calls?.[0]?.args.content)).toContain('can you make me a file?');
    messages.push(write, new ToolMessage({ content: 'OK', tool_call_id: write.tool_calls?.[0]?.id as string }));
    const present = await bound.invoke(messages);
    expect(present.tool_calls?.map((c) => [c.name, c.args.filepaths])).toEqual([['present_files', ['/mnt/user-data/outputs/demo-note.md']]]);
    messages.push(present, new ToolMessage({ content: 'Presented 1 file(s): /mnt/user-data/outputs/demo-note.md', tool_call_id: present.tool_calls?.[0]?.id as string }));
    const done = await bound.invoke(messages);
    expect(done.text.startsWith(LABEL)).toBe(true);
    expect(done.text).toContain('demo-note.md');
  });

  it("answers the goal evaluator's prompt: not met after the first answer, satisfied once the answer says it is reached", async () => {
    const first = [new HumanMessage('plan a trip'), new AIMessage(`${LABEL}You wrote: "plan a trip".`)];
    expect((await evaluateGoal({ model: client, objective: 'plan a trip', messages: first })).verdict).toBe('not_met_yet');
    const continued = await client.invoke([
      systemPrompt(),
      ...first,
      new HumanMessage({ content: '<goal_continuation>\nActive goal: plan a trip\n</goal_continuation>', additional_kwargs: { hide_from_ui: true } }),
    ]);
    const judged = await evaluateGoal({ model: client, objective: 'plan a trip', messages: [...first, continued] });
    expect(judged.verdict).toBe('satisfied');
    expect(judged.reason).not.toBe('');
  });

  it("answers memory extraction's prompt with facts the server's parser takes, each only once", async () => {
    const options = { confidenceThreshold: 0.7, maxFacts: 100 };
    const conversation = [
      { role: 'user' as const, content: "I'm a nurse & I work nights" },
      { role: 'assistant' as const, content: `${LABEL}You wrote it.` },
    ];
    const empty = { summaries: { workContext: '', personalContext: '', topOfMind: '' }, facts: [] };
    const update = parseMemoryUpdate((await client.invoke(buildExtractionMessages(empty, conversation, options))).text);
    expect(update?.newFacts.map((fact) => fact.content)).toEqual(['Tried deerflow-channels with the scripted demo model.', 'Said: "I\'m a nurse & I work nights".']);
    expect(update?.newFacts.every((fact) => fact.confidence >= options.confidenceThreshold)).toBe(true);

    const stored = {
      ...empty,
      facts: (update?.newFacts ?? []).map((fact, i) => ({ ...fact, id: `f${i}`, source: null, createdAt: new Date() })),
    };
    const again = parseMemoryUpdate((await client.invoke(buildExtractionMessages(stored, conversation, options))).text);
    expect(again?.newFacts).toEqual([]);
  });

  it('takes only its own key and says what is wrong with a bad request', async () => {
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${server.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post({ authorization: 'Bearer sk-someone-else' }, '{"messages":[]}')).status).toBe(401);
    const bad = await post({ authorization: `Bearer ${server.apiKey}` }, 'not json');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('JSON');
    expect((await post({ authorization: `Bearer ${server.apiKey}` }, '{"model":"x"}')).status).toBe(400);
  });

  it('splits text into pieces that join back to it', () => {
    const text = 'one two  three\nfour five six seven';
    expect(textPieces(text).join('')).toBe(text);
    expect(textPieces('')).toEqual([]);
  });
});
