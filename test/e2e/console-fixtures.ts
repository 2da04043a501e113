import { expect } from 'vitest';
import { echoResponder, type FakeChatRequest, type FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import type { ApiAnswer } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';
import { agentFinals, type webChat } from './web-chat-client.js';

/**
 * What the console's API and page tests seed through the real server, as people do it: users made
 * by the operator, turns said in the web chat, and the fake model's answers (held, failing, or a
 * memory extraction that learns `remember <fact>`).
 */

type Api = (method: string, path: string, key: string | undefined, body?: unknown) => Promise<ApiAnswer>;

/** The memory extraction's system prompt begins so. */
export const EXTRACTION_PROMPT = 'You maintain the long-term memory';

/**
 * The real server with the operator token `adminToken` and one model, the fake `model` (which
 * accepts `modelKey`, no retries); `more` is the rest of the config (YAML, one key a line).
 */
export function startConsoleServer(adminToken: string, model: FakeOpenAI, modelKey: string, more: string): Promise<ServerProcess> {
  return startServerProcess([
    '--config',
    writeConfig(`server: { port: 0 }
auth: { admin_token: ${adminToken} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: ${modelKey}, max_retries: 0 }
${more}`).path,
  ]);
}

/** Creates the user `name` with the operator's token; their id and API key. */
export async function createUser(api: Api, adminToken: string, name: string): Promise<{ id: string; key: string }> {
  const created = await api('POST', '/api/users', adminToken, { name });
  expect(created.status).toBe(201);
  return { id: created.body?.user.id as string, key: created.body?.api_key as string };
}

/** Says `text` in a new web chat conversation (titled `title`), waits for the agent's final; the conversation and the final. */
export async function chatTurn(chat: ReturnType<typeof webChat>, text: string, title?: string): Promise<{ conversation: string; answer: string }> {
  const conversation = await chat.newConversation(title);
  const stream = await chat.events(conversation);
  try {
    expect((await chat.send(conversation, text)).status).toBe(202);
    const answer = await stream.waitFor((frames) => agentFinals(frames)[0], 60_000);
    return { conversation, answer };
  } finally {
    stream.close();
  }
}

/** The fake model: `hold me` waits until the test releases it (pushed on `held`), `fail me` fails with 500, the rest is echoed. */
export function holdOrFailResponder(held: Array<() => void>) {
  return (request: FakeChatRequest) => {
    const question = lastUserText(request.messages);
    if (question.includes('hold me')) return new Promise<FakeReply>((resolve) => held.push(() => resolve({ text: 'released' })));
    if (question.includes('fail me')) return { fail: { status: 500, message: 'upstream broke on fail me' } };
    return echoResponder(request);
  };
}

/** The fake model: the memory extraction learns `remember <fact>` (up to a `;`) as the fact `<fact>`; the rest is echoed. */
export function memoryResponder(request: FakeChatRequest) {
  const system = request.messages.find((m) => m.role === 'system')?.content;
  if (typeof system === 'string' && system.startsWith(EXTRACTION_PROMPT)) {
    const said = JSON.stringify(request.messages.filter((m) => m.role !== 'system'));
    const newFacts = [...said.matchAll(/remember ([A-Za-z ]+)/g)].map((match) => ({ content: (match[1] as string).trim(), category: 'preference', confidence: 0.9 }));
    return { text: JSON.stringify({ user: {}, newFacts, factsToRemove: [] }) };
  }
  return { text: `Echo: ${lastUserText(request.messages)}` };
}
