import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { memoryOwnerOf } from '../../../src/agent/memory/owner.js';
import { type AgentServices, createAgentServices } from '../../../src/agent/services.js';
import { loadConfig } from '../../../src/config/index.js';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { extractFinalText } from '../../../src/manager/response.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest } from '../../../src/runtime/types.js';
import { type FakeChatRequest, FakeOpenAI, type FakeReply } from '../../fakes/openai/index.js';
import { openTestDatabase } from '../../helpers/database.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));

function ask(text: string, userId = 'alice'): RunRequest {
  return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: text }] }, context: { user_id: userId } };
}

function systemPrompt(request: FakeChatRequest): string {
  const message = request.messages.find((m) => m.role === 'system');
  return typeof message?.content === 'string' ? message.content : '';
}

const isEvaluator = (request: FakeChatRequest) => systemPrompt(request).startsWith('You judge whether an AI assistant has achieved a goal');
const isMemoryExtraction = (request: FakeChatRequest) => systemPrompt(request).startsWith('You maintain the long-term memory');
const verdict = (value: string, reason = 'because') => ({ text: JSON.stringify({ verdict: value, reason, evidence: 'seen' }) });

/**
 * The agent as the server wires it (`createAgentServices` + the embedded runtime) against a fake
 * model that plays three parts: the agent, the goal evaluator and the memory extractor.
 */
describe('goals, memory and skills through the embedded runtime', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let workDir: string;
  let services: AgentServices;
  let runtime: AgentRuntime;
  /** Scripted answers per part; when a queue is empty the part answers a default. */
  let agentReplies: FakeReply[];
  let verdicts: FakeReply[];
  /** Extraction answers keyed by a phrase of the conversation they belong to (other runs are learned from concurrently). */
  let extractions: Map<string, FakeReply>;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    workDir = await mkdtemp(join(tmpdir(), 'dfc-agent-services-'));
    const skillsDir = join(workDir, 'skills');
    await mkdir(join(skillsDir, 'public', 'release-notes'), { recursive: true });
    await writeFile(
      join(skillsDir, 'public', 'release-notes', 'SKILL.md'),
      '---\nname: release-notes\ndescription: Write release notes from a changelog.\n---\n# Release notes\nGroup changes by Added, Changed, Fixed.\n',
    );
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    const configPath = join(workDir, 'config.yaml');
    await writeFile(
      configPath,
      [
        'models:',
        `  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-test, max_retries: 0 }`,
        `data_dir: ${join(workDir, 'data')}`,
        `skills: { dir: ${skillsDir} }`,
        'memory: { debounce_seconds: 0, max_facts: 3 }',
        'goals: { max_continuations: 3 }',
      ].join('\n'),
    );
    const { config } = loadConfig({ path: configPath, env: {}, platforms: [] });
    services = await createAgentServices({
      config,
      db: database.db,
      dataDir: join(workDir, 'data'),
      skillsDir,
      environment: { PATH: process.env.PATH },
      logger: silentLogger(),
    });
    runtime = await createEmbeddedRuntime({
      db: database.db,
      models: config.models,
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      tools: services.sandboxTools,
      promptSources: services.promptSources,
      memoryStore: services.memoryStore,
      goals: services.goals,
      afterRun: services.afterRun,
    });
  });
  afterAll(async () => {
    await runtime.close();
    await services.close(5000);
    await model.stop();
    await database.close();
    await rm(workDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    model.respond = answerByRole;
    model.requests.length = 0;
    agentReplies = [];
    verdicts = [];
    extractions = new Map();
  });

  const answerByRole = (request: FakeChatRequest): FakeReply => {
    if (isEvaluator(request)) return verdicts.shift() ?? verdict('satisfied');
    if (isMemoryExtraction(request)) {
      const conversation = JSON.stringify(request.messages);
      const key = [...extractions.keys()].find((phrase) => conversation.includes(phrase));
      if (key === undefined) return { text: '{"user": {}, "newFacts": [], "factsToRemove": []}' };
      const reply = extractions.get(key) as FakeReply;
      extractions.delete(key);
      return reply;
    }
    return agentReplies.shift() ?? { text: 'ok' };
  };
  const agentRequests = () => model.requests.filter((r) => !isEvaluator(r) && !isMemoryExtraction(r));
  const evaluatorRequests = () => model.requests.filter(isEvaluator);
  const newThread = async () => (await runtime.createThread()).thread_id;
  const evaluations = (threadId: string) =>
    database.db.select().from(schema.goalEvaluations).where(eq(schema.goalEvaluations.threadId, threadId)).orderBy(schema.goalEvaluations.createdAt);

  describe('goals', () => {
    it('continues while the evaluator says not met, shows every step, and clears the goal once satisfied', async () => {
      const threadId = await newThread();
      await runtime.setGoal(threadId, { objective: 'write three haikus' });
      agentReplies.push({ text: 'Haiku one.' }, { text: 'Haiku two and three.' });
      verdicts.push(verdict('not_met_yet', 'only one haiku so far'), verdict('satisfied', 'three haikus written'));
      const { values } = await runtime.waitRun(threadId, ask('write three haikus'));
      expect(extractFinalText(values)).toBe('Haiku one.\n\nHaiku two and three.');
      // The continuation is a hidden user message that names the objective and the reason.
      const continuation = agentRequests()[1]?.messages.at(-1);
      expect(continuation?.role).toBe('user');
      expect(continuation?.content).toContain('write three haikus');
      expect(continuation?.content).toContain('only one haiku so far');
      // The evaluator sees visible text only: never the hidden continuation prompt.
      expect(JSON.stringify(evaluatorRequests()[1]?.messages)).not.toContain('goal_continuation');
      expect(await runtime.getGoal(threadId)).toBeNull();
      expect((await evaluations(threadId)).map((e) => [e.verdict, e.action, e.reason])).toEqual([
        ['not_met_yet', 'continued', 'only one haiku so far'],
        ['satisfied', 'cleared', 'three haikus written'],
      ]);
    });

    it('stops at the continuation cap and keeps the goal with the reason', async () => {
      const threadId = await newThread();
      await runtime.setGoal(threadId, { objective: 'finish the migration', max_continuations: 8 });
      let step = 0;
      agentReplies.push(...Array.from({ length: 10 }, () => ({ text: `Step ${++step}.` })));
      verdicts.push(...Array.from({ length: 10 }, () => verdict('not_met_yet', 'more to do')));
      await runtime.waitRun(threadId, ask('finish the migration'));
      // goals.max_continuations (3) caps the goal's own 8.
      expect(agentRequests()).toHaveLength(1 + 3);
      const goal = await runtime.getGoal(threadId);
      expect(goal?.last_evaluation).toMatchObject({ verdict: 'not_met_yet', action: 'stood_down', stand_down_reason: 'continuation cap reached (3)' });
      expect(await evaluations(threadId)).toHaveLength(4);
    });

    it('breaks off after two continuations that add no new visible text', async () => {
      const threadId = await newThread();
      await runtime.setGoal(threadId, { objective: 'make progress' });
      agentReplies.push({ text: 'Started.' }, { text: 'Started.' }, { text: '' });
      verdicts.push(verdict('not_met_yet'), verdict('not_met_yet'), verdict('not_met_yet'));
      await runtime.waitRun(threadId, ask('make progress'));
      expect(agentRequests()).toHaveLength(3);
      expect((await runtime.getGoal(threadId))?.last_evaluation).toMatchObject({ stand_down_reason: 'no progress in 2 continuations' });
    });

    it('stands down when the evaluator needs the user, and when its answer is garbage', async () => {
      const threadId = await newThread();
      await runtime.setGoal(threadId, { objective: 'deploy' });
      verdicts.push(verdict('needs_user_input', 'which environment?'));
      await runtime.waitRun(threadId, ask('deploy'));
      verdicts.push({ text: 'I think it is fine' });
      await runtime.waitRun(threadId, ask('staging'));
      expect(agentRequests()).toHaveLength(2);
      expect((await evaluations(threadId)).map((e) => [e.verdict, e.action])).toEqual([
        ['needs_user_input', 'stood_down'],
        ['evaluation_failed', 'stood_down'],
      ]);
      expect(await runtime.getGoal(threadId)).not.toBeNull();
    });

    it('does not evaluate threads without a goal, and refuses objectives over 4000 characters or more than 8 continuations', async () => {
      const threadId = await newThread();
      await runtime.waitRun(threadId, ask('hello'));
      expect(evaluatorRequests()).toHaveLength(0);
      await expect(runtime.setGoal(threadId, { objective: 'x'.repeat(4001) })).rejects.toMatchObject({ status: 422 });
      await expect(runtime.setGoal(threadId, { objective: 'ok', max_continuations: 9 })).rejects.toMatchObject({ status: 422 });
      expect(await runtime.getGoal(threadId)).toBeNull();
    });
  });

  describe('memory', () => {
    it('learns facts after a run, injects them into the next turn, and keeps users apart', async () => {
      extractions.set('I always use tabs', {
        text: JSON.stringify({
          user: { workContext: 'Maintains the billing service.' },
          newFacts: [
            { content: '  Prefers tabs over spaces ', category: 'preference', confidence: 0.9 },
            { content: 'Maybe likes tea', category: 'preference', confidence: 0.4 },
          ],
          factsToRemove: [],
        }),
      });
      await runtime.waitRun(await newThread(), ask('I always use tabs, by the way.', 'dora'));
      await waitUntil(async () => (await runtime.getMemory('dora')).facts.length > 0);
      const memory = await runtime.getMemory('dora');
      expect(memory.facts.map((f) => f.content)).toEqual(['Prefers tabs over spaces']);
      expect(memory.summaries.work_context).toBe('Maintains the billing service.');
      await runtime.waitRun(await newThread(), ask('format this file', 'dora'));
      const prompt = systemPrompt(agentRequests().at(-1) as FakeChatRequest);
      expect(prompt).toContain('<memory>');
      expect(prompt).toContain('Prefers tabs over spaces');

      await runtime.waitRun(await newThread(), ask('format this file', 'bob'));
      expect(systemPrompt(agentRequests().at(-1) as FakeChatRequest)).not.toContain('Prefers tabs');
      expect((await runtime.getMemory('bob')).facts).toEqual([]);

      expect(await runtime.clearMemory('dora')).toBe(1);
      expect((await runtime.getMemory('dora')).facts).toEqual([]);
    });

    it("keeps a custom agent's memory of a person apart from the person's own, both ways", async () => {
      extractions.set('erin-personal', {
        text: JSON.stringify({ user: {}, newFacts: [{ content: 'Has a cat named Miso', category: 'personal', confidence: 0.9 }], factsToRemove: [] }),
      });
      await runtime.waitRun(await newThread(), ask('erin-personal', 'erin'));
      await waitUntil(async () => (await runtime.getMemory('erin')).facts.length === 1);

      extractions.set('erin-triage', {
        text: JSON.stringify({ user: {}, newFacts: [{ content: 'Labels bugs as p1 first', category: 'preference', confidence: 0.9 }], factsToRemove: [] }),
      });
      const asTriage = { ...ask('erin-triage', 'erin'), context: { user_id: 'erin', agent_name: 'triage' } };
      await runtime.waitRun(await newThread(), asTriage);
      // The agent's prompt has none of the person's own memory.
      expect(systemPrompt(agentRequests().at(-1) as FakeChatRequest)).not.toContain('Miso');
      await waitUntil(async () => (await runtime.getMemory(memoryOwnerOf('erin', 'triage'))).facts.length === 1);
      expect((await runtime.getMemory('erin')).facts.map((f) => f.content)).toEqual(['Has a cat named Miso']);
      expect((await runtime.getMemory(memoryOwnerOf('erin', 'triage'))).facts.map((f) => f.content)).toEqual(['Labels bugs as p1 first']);

      // And the person's own turns never see what the agent learned.
      await runtime.waitRun(await newThread(), ask('format this file', 'erin'));
      const prompt = systemPrompt(agentRequests().at(-1) as FakeChatRequest);
      expect(prompt).toContain('Miso');
      expect(prompt).not.toContain('p1 first');
      expect(memoryOwnerOf('erin', 'lead')).toBe('erin');
    });

    it('stores a fact once however often it is learned, and keeps only max_facts of the most confident', async () => {
      const fact = (content: string, confidence: number) => ({ content, category: 'knowledge', confidence });
      extractions.set('carol-first', {
        text: JSON.stringify({ user: {}, newFacts: [fact('Knows Rust', 0.8), fact('Knows Go', 0.75)], factsToRemove: [] }),
      });
      const threadId = await newThread();
      await runtime.waitRun(threadId, ask('carol-first', 'carol'));
      await waitUntil(async () => (await runtime.getMemory('carol')).facts.length === 2);
      // The second extraction sees the whole thread, so it is keyed by the second message.
      extractions.set('carol-second', {
        text: JSON.stringify({ user: {}, newFacts: [fact('Knows Rust ', 0.95), fact('Knows Python', 0.99), fact('Knows Zig', 0.9)], factsToRemove: [] }),
      });
      await runtime.waitRun(threadId, ask('carol-second', 'carol'));
      await waitUntil(async () => (await runtime.getMemory('carol')).facts.some((f) => f.content === 'Knows Python'));
      const contents = (await runtime.getMemory('carol')).facts.map((f) => f.content).sort();
      expect(contents).toEqual(['Knows Python', 'Knows Rust', 'Knows Zig']);
    });
  });

  describe('skills', () => {
    it('lists enabled skills, activates one for a /skill turn, and forgets it when disabled', async () => {
      await runtime.waitRun(await newThread(), ask('hello'));
      const listed = systemPrompt(agentRequests().at(-1) as FakeChatRequest);
      expect(listed).toContain('release-notes');
      expect(listed).toContain('/mnt/skills/public/release-notes/SKILL.md');
      expect(listed).not.toContain('<active_skill');

      await runtime.waitRun(await newThread(), ask('/release-notes for v2'));
      const active = systemPrompt(agentRequests().at(-1) as FakeChatRequest);
      expect(active).toContain('<active_skill');
      expect(active).toContain('Group changes by Added, Changed, Fixed.');

      await services.skills.setEnabled('release-notes', false);
      await runtime.waitRun(await newThread(), ask('/release-notes for v3'));
      const disabled = systemPrompt(agentRequests().at(-1) as FakeChatRequest);
      expect(disabled).not.toContain('release-notes');
      await services.skills.setEnabled('release-notes', true);
    });
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
