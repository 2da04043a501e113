import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatRequest, FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import { apiClient, type Json } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The shell as a boundary, through the real server started as `npm start` does (issue #13): two
 * accounts the operator granted the shell; alice's commands try every way the review found to
 * reach bob's files, the database, the config and the server's secrets. The model is scripted to
 * run the user's message as a `bash` command and to answer with what the shell printed, so each
 * reply shows exactly what the shell could see.
 */

const ADMIN_TOKEN = 'operator-token-sandbox-boundary';
const MODEL_KEY = 'sk-e2e-sandbox-boundary-key';
/** In the server's environment under a name no deny-list would catch. */
const STRAY_SECRET = 'stray-secret-in-server-env';
const BOB_NOTE = 'bob-private-note-7c1f';

let model: FakeOpenAI;
let server: ServerProcess;
let dataDir: string;
let configPath: string;

function scriptedModel(request: FakeChatRequest): FakeReply {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `shell said: ${typeof last.content === 'string' ? last.content : ''}` };
  const offered = (request.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
  if (!offered.includes('bash')) return { text: 'no shell offered' };
  return { toolCalls: [{ name: 'bash', args: { description: 'probe', command: lastUserText(request.messages) } }] };
}

const api = apiClient(() => server.url);

async function grantedUser(name: string): Promise<{ id: string; key: string }> {
  const created = await api('POST', '/api/users', ADMIN_TOKEN, { name });
  expect(created.status).toBe(201);
  expect((await api('PATCH', `/api/users/${created.body?.user.id}`, ADMIN_TOKEN, { can_use_shell: true })).status).toBe(200);
  return { id: created.body?.user.id, key: created.body?.api_key };
}

/** Runs `command` in `key`'s shell on a fresh thread; resolves with what the shell printed. */
async function shell(key: string, command: string): Promise<string> {
  const thread = await api('POST', '/api/threads', key, {});
  const run = await api('POST', `/api/threads/${thread.body?.thread_id}/runs/wait`, key, {
    assistant_id: 'lead_agent',
    input: { messages: [{ role: 'human', content: command }] },
  });
  expect(run.status).toBe(200);
  const reply = String(run.body?.messages.at(-1)?.content);
  expect(reply.startsWith('shell said: ')).toBe(true);
  return reply.slice('shell said: '.length);
}

beforeAll(async () => {
  model = new FakeOpenAI({ apiKey: MODEL_KEY });
  model.respond = scriptedModel;
  await model.start();
  const config = writeConfig(`server: { port: 0 }
auth: { admin_token: $ADMIN_TOKEN }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: $MODEL_KEY, max_retries: 0 }
memory: { enabled: false }
channel_connections: { enabled: true }
`);
  configPath = config.path;
  dataDir = join(config.dir, '.data');
  server = await startServerProcess(['--config', config.path], {
    cwd: config.dir,
    env: { ADMIN_TOKEN, MODEL_KEY, BOT_CREDS: STRAY_SECRET },
  });
});

afterAll(async () => {
  await server?.stop();
  await model?.stop();
});

describe("a granted account's shell", () => {
  it('runs isolated, and /health says so', async () => {
    const health = (await (await fetch(`${server.url}/health`)).json()) as Json;
    expect(health.sandbox).toMatchObject({ isolation: 'bubblewrap' });
  });

  it("cannot reach another account's files, the database, the config, or the server's secrets", async () => {
    const [alice, bob] = await Promise.all([grantedUser('alice'), grantedUser('bob')]);
    expect(await shell(bob.key, `echo ${BOB_NOTE} > notes.txt && cat notes.txt`)).toContain(BOB_NOTE);

    const serverPid = server.child.pid as number;
    const seen = await shell(
      alice.key,
      [
        `cat /proc/${serverPid}/environ`,
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/1/environ",
        'env',
        `ls -R ${dataDir}`,
        `cat ${configPath}`,
        `cat ${dataDir}/users/${bob.id}/threads/*/user-data/workspace/notes.txt`,
        'cd ../../../../.. && ls -a && ls -a mnt/user-data',
        'find / -name notes.txt -not -path "/proc/*" 2>/dev/null',
        'ps -eo comm=',
        'echo probe-done',
      ]
        .map((command) => `{ ${command}; } 2>&1`)
        .join('; '),
    );
    expect(seen).toContain('probe-done');
    for (const secret of [ADMIN_TOKEN, MODEL_KEY, STRAY_SECRET, BOB_NOTE, 'pglite', 'node']) expect(seen).not.toContain(secret);
    // The target exists on the host, where alice's commands looked for it.
    const threads = await readdir(join(dataDir, 'users', bob.id, 'threads'));
    const notes = await Promise.all(
      threads.map((thread) => readFile(join(dataDir, 'users', bob.id, 'threads', thread, 'user-data', 'workspace', 'notes.txt'), 'utf8').catch(() => '')),
    );
    expect(notes.join('')).toContain(BOB_NOTE);
  });
});
