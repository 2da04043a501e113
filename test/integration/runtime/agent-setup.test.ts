import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { AgentCatalog } from '../../../src/agent/catalog.js';
import type { ModelConfig } from '../../../src/agent/config.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest } from '../../../src/runtime/types.js';
import { type FakeChatRequest, FakeOpenAI, messageText } from '../../fakes/openai/index.js';
import { openTestDatabase } from '../../helpers/database.js';

/**
 * Agents made in chat: `setup_agent` offered to `/bootstrap` runs of trusted senders only, the
 * files it writes, who may update them, and the catalog `/agent` lists from.
 */

const SHIPPED_AGENTS = fileURLToPath(new URL('../../../agents', import.meta.url));

function ask(text: string, context: Record<string, unknown>): RunRequest {
  return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: text }] }, context };
}

function toolNames(request: FakeChatRequest | undefined): string[] {
  return (request?.tools ?? []).map((definition) => (definition as { function: { name: string } }).function.name);
}

function toolResults(request: FakeChatRequest | undefined): string[] {
  return (request?.messages ?? []).filter((message) => message.role === 'tool').map((message) => messageText(message));
}

describe('agents made in chat', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let models: ModelConfig[];
  let agentsDir: string;
  let runtime: AgentRuntime;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(async () => {
    await database?.close();
  });
  beforeEach(async () => {
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    models = [{ name: 'default', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 }];
    agentsDir = mkdtempSync(join(tmpdir(), 'dfc-agent-setup-'));
    cpSync(SHIPPED_AGENTS, agentsDir, { recursive: true });
    runtime = await createEmbeddedRuntime({ db: database.db, models, agentsDir, logger: silentLogger(), agentSetupDir: agentsDir });
  });
  afterEach(async () => {
    await runtime?.close();
    await model?.stop();
    rmSync(agentsDir, { recursive: true, force: true });
  });

  const SQL_SOUL = 'You are a careful SQL reviewer. Point out missing indexes and unsafe migrations.';

  it('offers setup_agent to a trusted sender’s bootstrap run, saves the agent, and lists it for its creator only', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'setup_agent', args: { name: 'sql-reviewer', description: 'Reviews SQL migrations', soul: SQL_SOUL } }] },
      { text: 'Saved. Talk to it with /agent sql-reviewer.' },
    );
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Make me a SQL reviewer.', { user_id: 'alice', is_bootstrap: true }));
    expect(toolNames(model.requests[0])).toContain('setup_agent');
    expect(String(model.requests[0]?.messages[0]?.content)).toContain('<agent_setup>');
    expect(toolResults(model.requests[1])).toEqual(['Saved the agent "sql-reviewer". The user can talk to it with /agent sql-reviewer.']);
    expect(readFileSync(join(agentsDir, 'sql-reviewer', 'SOUL.md'), 'utf8')).toBe(`${SQL_SOUL}\n`);
    expect(parseYaml(readFileSync(join(agentsDir, 'sql-reviewer', 'config.yaml'), 'utf8'))).toEqual({
      name: 'sql-reviewer',
      created_by: 'alice',
      chat: { enabled: false },
      description: 'Reviews SQL migrations',
    });

    const catalog = new AgentCatalog(agentsDir);
    expect(await catalog.availableTo('alice')).toEqual([{ name: 'sql-reviewer', description: 'Reviews SQL migrations' }]);
    expect(await catalog.availableTo('bob')).toEqual([]);

    // The agent it made answers with the persona it was given.
    model.enqueue({ text: 'Add an index on orders.customer_id.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Review this.', { user_id: 'alice', agent_name: 'sql-reviewer' }));
    expect(String(model.requests.at(-1)?.messages[0]?.content)).toContain(SQL_SOUL);
  });

  it('lets only the creator update an agent, and never the default agent or the operator’s', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'setup_agent', args: { name: 'helper', description: 'v1', soul: 'You help.' } }] },
      { text: 'ok' },
      { toolCalls: [{ name: 'setup_agent', args: { name: 'helper', description: 'stolen', soul: 'You obey bob.' } }] },
      { toolCalls: [{ name: 'setup_agent', args: { name: 'lead', description: 'x', soul: 'You are bob’s.' } }] },
      { toolCalls: [{ name: 'setup_agent', args: { name: 'triage', description: 'x', soul: 'You are bob’s.' } }] },
      { text: 'none of that worked' },
      { toolCalls: [{ name: 'setup_agent', args: { name: 'helper', description: 'v2', soul: 'You help more.' } }] },
      { text: 'ok' },
    );
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Make a helper.', { user_id: 'alice', is_bootstrap: true }));
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Take over.', { user_id: 'bob', is_bootstrap: true }));
    expect(toolResults(model.requests[5])).toEqual([
      'Error: an agent named "helper" already exists and was not created by this user; choose another name.',
      'Error: "lead" is the default agent and cannot be replaced from chat; choose another name.',
      'Error: an agent named "triage" already exists and was not created by this user; choose another name.',
    ]);
    expect(readFileSync(join(agentsDir, 'helper', 'SOUL.md'), 'utf8')).toBe('You help.\n');
    expect(readFileSync(join(agentsDir, 'triage', 'SOUL.md'), 'utf8')).not.toContain('bob');
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Improve it.', { user_id: 'alice', is_bootstrap: true }));
    expect(readFileSync(join(agentsDir, 'helper', 'SOUL.md'), 'utf8')).toBe('You help more.\n');
    expect(parseYaml(readFileSync(join(agentsDir, 'helper', 'config.yaml'), 'utf8'))).toMatchObject({ created_by: 'alice', description: 'v2' });
  });

  it('offers no setup_agent outside bootstrap, nor to an untrusted sender', async () => {
    model.enqueue({ text: 'a' }, { text: 'b' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi.', { user_id: 'alice' }));
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi.', { user_id: 'mallory', is_bootstrap: true, trusted_sender: false }));
    for (const request of model.requests) {
      expect(toolNames(request)).not.toContain('setup_agent');
      expect(String(request.messages[0]?.content)).not.toContain('<agent_setup>');
    }
  });

  it('lists the agents the operator shared, and skips what it cannot read', async () => {
    mkdirSync(join(agentsDir, 'support'));
    writeFileSync(join(agentsDir, 'support', 'config.yaml'), 'description: Answers product questions\nchat: { enabled: true }\n');
    mkdirSync(join(agentsDir, 'broken'));
    writeFileSync(join(agentsDir, 'broken', 'config.yaml'), 'chat: [\n');
    expect(existsSync(join(agentsDir, 'triage'))).toBe(true);
    expect(await new AgentCatalog(agentsDir).availableTo('anyone')).toEqual([{ name: 'support', description: 'Answers product questions' }]);
  });
});
