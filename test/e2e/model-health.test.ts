import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { closedPort } from '../helpers/closed-port.js';
import { runCli, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Each configured model checked by the real server against the fake model: in the background at
 * start (never holding /health), and on demand with `?check=models`, shared among callers. What is
 * asserted is what the operator reads in /health, the log and the CLI.
 */

const KEY = 'sk-e2e-model-health-0123456789';
const WRONG_KEY = 'sk-e2e-wrong-key-abcdefghijklmn';

interface Check {
  status: string;
  detail: string;
  checked_at: string | null;
}
interface Report {
  ok: boolean;
  model: { configured: boolean; models: string[]; checks: Record<string, Check> };
}

let openai: FakeOpenAI;
let listOnly: FakeOpenAI;
let noRoutes: FakeOpenAI;
let server: ServerProcess;
let configPath: string;
let configDir: string;
let releaseModelRoutes: () => void;

async function health(query = ''): Promise<{ status: number; report: Report }> {
  const response = await fetch(`${server.url}/health${query}`);
  return { status: response.status, report: (await response.json()) as Report };
}

function statuses(report: Report): Record<string, string> {
  return Object.fromEntries(Object.entries(report.model.checks).map(([name, check]) => [name, check.status]));
}

describe('model checks in /health', () => {
  beforeAll(async () => {
    openai = new FakeOpenAI({ apiKey: KEY, models: ['gpt-4o-mini'] });
    listOnly = new FakeOpenAI({ apiKey: KEY, models: ['served-model'], modelRoutes: 'list-only' });
    noRoutes = new FakeOpenAI({ apiKey: KEY, modelRoutes: 'none' });
    await Promise.all([openai.start(), listOnly.start(), noRoutes.start()]);
    // The start's check stays under way until the test lets the fake answer.
    releaseModelRoutes = openai.holdModelRoutes();
    const port = await closedPort();
    const config = writeConfig(`server: { port: 0 }
models:
  - { name: good, model: gpt-4o-mini, base_url: "${openai.baseURL}", api_key: ${KEY} }
  - { name: wrong-key, model: gpt-4o-mini, base_url: "${openai.baseURL}", api_key: ${WRONG_KEY} }
  - { name: missing, model: gpt-nonexistent, base_url: "${openai.baseURL}", api_key: ${KEY} }
  - { name: closed, model: gpt-4o-mini, base_url: "http://127.0.0.1:${port}/v1", api_key: ${KEY} }
  - { name: fallback, model: served-model, base_url: "${listOnly.baseURL}", api_key: ${KEY} }
  - { name: unverifiable, model: gpt-4o-mini, base_url: "${noRoutes.baseURL}", api_key: ${KEY} }
`);
    configPath = config.path;
    configDir = config.dir;
    server = await startServerProcess(['--config', configPath]);
  });

  afterAll(async () => {
    releaseModelRoutes?.();
    await server?.stop();
    await Promise.all([openai?.stop(), listOnly?.stop(), noRoutes?.stop()]);
  });

  it('answers 200 at once while the first check is under way, every model pending', async () => {
    await openai.waitForModelRequests(3, 10_000);
    const { status, report } = await health();
    expect(status).toBe(200);
    expect(report.model.checks.good).toEqual({ status: 'pending', detail: expect.any(String), checked_at: null });
    expect(report.model.checks['wrong-key']?.status).toBe('pending');
  });

  it('shares the check under way among concurrent ?check=models callers: one request per model at the endpoint', async () => {
    const callers = [health('?check=models'), health('?check=models'), health('?check=models')];
    // Plain /health is never held by a check.
    expect((await health()).report.model.checks.good?.status).toBe('pending');
    releaseModelRoutes();
    const answers = await Promise.all(callers);
    for (const { status, report } of answers) {
      expect(status).toBe(200);
      expect(report.model.checks.good?.status).toBe('ok');
    }
    const checkedAt = answers.map(({ report }) => report.model.checks.good?.checked_at);
    expect(new Set(checkedAt).size).toBe(1);
    // good, wrong-key and missing: one retrieve each, all from the check the server began at start.
    expect([...openai.modelRequests].sort()).toEqual(['GET /v1/models/gpt-4o-mini', 'GET /v1/models/gpt-4o-mini', 'GET /v1/models/gpt-nonexistent']);
    // Within 10 s of that check, another caller gets its result rather than a new check.
    const again = await health('?check=models');
    expect(again.report.model.checks.good?.checked_at).toBe(checkedAt[0]);
    expect(openai.modelRequests).toHaveLength(3);
  });

  it('tells each model’s trouble apart, and stays healthy (200) with failing models', async () => {
    const { status, report } = await health();
    expect(status).toBe(200);
    expect(report.ok).toBe(true);
    expect(statuses(report)).toEqual({
      good: 'ok',
      'wrong-key': 'key_refused',
      missing: 'model_missing',
      closed: 'unreachable',
      fallback: 'ok',
      unverifiable: 'unverified',
    });
    expect(report.model.checks.closed?.detail).toContain('connection refused');
    expect(report.model.checks.missing?.detail).toContain('gpt-nonexistent');
    // The fallback: the per-model route is missing there, so the list was asked.
    expect(listOnly.modelRequests).toEqual(['GET /v1/models/served-model', 'GET /v1/models']);
    expect(JSON.stringify(report)).not.toContain(WRONG_KEY.slice(3, 12));
  });

  it('logs one warn line per failing model at start, without the key', async () => {
    for (const name of ['wrong-key', 'missing', 'closed']) {
      const line = await server.waitForLog((entry) => entry.model === name && entry.level === 40);
      expect(line).toMatchObject({ status: expect.any(String), detail: expect.any(String) });
    }
    const warned = server.logs.filter((entry) => typeof entry.model === 'string' && entry.level === 40).map((entry) => entry.model);
    expect(warned.sort()).toEqual(['closed', 'missing', 'wrong-key']);
    const everything = JSON.stringify(server.logs) + server.stderr();
    expect(everything).not.toContain(WRONG_KEY.slice(3, 12));
    expect(everything).not.toContain(KEY.slice(3, 12));
  });

  it('refuses an unknown ?check= with a 400 that says what is expected', async () => {
    const response = await fetch(`${server.url}/health?check=everything`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain('query.check');
  });

  it('npm run cli -- health --check-models prints the report and each model’s check', async () => {
    const { code, stdout, stderr } = await runCli(['--config', configPath, '--url', server.url, 'health', '--check-models'], configDir);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as Report).model.checks['wrong-key']?.status).toBe('key_refused');
    expect(stderr).toContain('model wrong-key: key_refused, GET /models/gpt-4o-mini: the service refused the key (HTTP 401)');
    expect(stderr).toMatch(/model good: ok, .* \(checked \d{4}-/);
    expect((await runCli(['--config', configPath, 'user', 'list', '--check-models'], configDir)).code).toBe(2);
  });
});
