import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { ModelHealth } from '../../../src/agent/model-health.js';
import { FakeOpenAI } from '../../fakes/openai/index.js';
import { closedPort } from '../../helpers/closed-port.js';

const KEY = 'sk-test-model-health-0123456789';

function model(name: string, fields: Partial<ModelConfig> = {}): ModelConfig {
  return { name, model: 'gpt-4o-mini', api_key: KEY, timeout_seconds: 5, max_retries: 2, ...fields } as ModelConfig;
}

const fakes: FakeOpenAI[] = [];
async function startFake(options: ConstructorParameters<typeof FakeOpenAI>[0]): Promise<FakeOpenAI> {
  const fake = new FakeOpenAI(options);
  fakes.push(fake);
  await fake.start();
  return fake;
}

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFake({ apiKey: KEY, models: ['gpt-4o-mini'] });
});
afterEach(() => {
  fake.modelRequests.length = 0;
});
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.stop()));
});

describe('ModelHealth', () => {
  it('says pending for every model before the first check ended', () => {
    const health = new ModelHealth({ models: [model('default', { base_url: fake.baseURL })] });
    expect(health.status()).toEqual({ default: { status: 'pending', detail: expect.any(String), checked_at: null } });
  });

  it('tells each kind of trouble apart, and never puts the key in a detail', async () => {
    const listOnly = await startFake({ apiKey: KEY, models: ['served-model'], modelRoutes: 'list-only' });
    const noRoutes = await startFake({ apiKey: KEY, modelRoutes: 'none' });
    const port = await closedPort();
    const health = new ModelHealth({
      models: [
        model('good', { base_url: fake.baseURL }),
        model('wrong-key', { base_url: fake.baseURL, api_key: 'sk-wrong-key-abcdefghijklmnop' }),
        model('missing', { base_url: fake.baseURL, model: 'gpt-nonexistent' }),
        model('closed', { base_url: `http://127.0.0.1:${port}/v1` }),
        model('listed', { base_url: listOnly.baseURL, model: 'served-model' }),
        model('not-listed', { base_url: listOnly.baseURL, model: 'other-model' }),
        model('unverifiable', { base_url: noRoutes.baseURL }),
      ],
      now: () => Date.parse('2026-12-06T12:00:00Z'),
    });
    const checks = await health.check();
    expect(Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check.status]))).toEqual({
      good: 'ok',
      'wrong-key': 'key_refused',
      missing: 'model_missing',
      closed: 'unreachable',
      listed: 'ok',
      'not-listed': 'model_missing',
      unverifiable: 'unverified',
    });
    expect(checks.closed?.detail).toContain('connection refused');
    expect(checks.good?.checked_at).toBe('2026-12-06T12:00:00.000Z');
    // The fallback asked the list only because the per-model route was missing.
    expect(listOnly.modelRequests).toEqual(expect.arrayContaining(['GET /v1/models/served-model', 'GET /v1/models']));
    expect(JSON.stringify(checks)).not.toMatch(/sk-wrong|sk-test/);
    expect(health.status()).toBe(checks);
  });

  it('shares a check under way, and gives the last result until 10 s after it began', async () => {
    let nowMs = Date.parse('2026-12-06T12:00:00Z');
    const health = new ModelHealth({ models: [model('default', { base_url: fake.baseURL })], now: () => nowMs });
    const release = fake.holdModelRoutes();
    const callers = [health.check(), health.check(), health.check()];
    await fake.waitForModelRequests(1);
    release();
    const [first, ...others] = await Promise.all(callers);
    for (const other of others) expect(other).toBe(first);
    expect(fake.modelRequests).toEqual(['GET /v1/models/gpt-4o-mini']);

    nowMs += 9_999;
    expect(await health.check()).toBe(first);
    expect(fake.modelRequests).toHaveLength(1);

    nowMs += 1;
    const fresh = await health.check();
    expect(fake.modelRequests).toHaveLength(2);
    expect(fresh.default?.checked_at).toBe('2026-12-06T12:00:10.000Z');
  });
});
