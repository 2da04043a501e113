import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/** A model endpoint's error text quotes part of the key (OpenAI's 401 does): it never reaches a log. */

const WRONG_KEY = 'sk-live-WRONGKEYabcdefgh9f3k';
let model: FakeOpenAI;
let server: ServerProcess;

beforeAll(async () => {
  model = new FakeOpenAI({ apiKey: 'the-key-the-endpoint-wants' });
  await model.start();
  const { path } = writeConfig(`server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: $MODEL_KEY }
`);
  server = await startServerProcess(['--config', path], { env: { MODEL_KEY: WRONG_KEY } });
});

afterAll(async () => {
  await server?.stop();
  await model?.stop();
});

describe('secrets in logs', () => {
  it('logs a refused model key as a failed run, without any part of the key', async () => {
    const thread = (await (await fetch(`${server.url}/api/threads`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).json()) as {
      thread_id: string;
    };
    const answer = await fetch(`${server.url}/api/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: 'hi' }] } }),
    });
    // The caller is told the key was refused, in our words, never the endpoint's (which quote it).
    expect(await answer.json()).toEqual({
      __error__: { error: 'MODEL_UNAVAILABLE', message: "The model service refused this server's key. Ask the operator to check the model's api_key." },
    });
    await server.waitForLog((entry) => entry.msg === 'run failed');
    const written = `${JSON.stringify(server.logs)}\n${server.stderr()}`;
    expect(written).toContain('key provided');
    for (const fragment of ['9f3k', 'sk-live', 'WRONGKEY', 'abcdefgh']) expect(written).not.toContain(fragment);
  });
});
