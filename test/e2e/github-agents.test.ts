import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESUMED_RUN_NOTE } from '../../src/manager/channel-manager.js';
import { createSelfSignedCert, FakeGitHub, generateAppKeyPair, type SelfSignedCert } from '../fakes/github/index.js';
import { type FakeChatMessage, type FakeChatRequest, FakeOpenAI, type FakeReply, type FakeResponder } from '../fakes/openai/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * GitHub agents end to end: the real server (`src/main.ts`) gets signed deliveries built from
 * `@octokit/webhooks-examples` payloads; the agent it wakes runs the real `gh` CLI in its sandbox,
 * which talks over TLS (a throwaway certificate trusted through `SSL_CERT_FILE`) to a fake GitHub
 * Enterprise host, with the installation token the server minted from a fake App. What is
 * asserted is what GitHub would see: comments, reactions, tokens, and the webhook's answers.
 */

interface ExampleGroup {
  name: string;
  examples: Record<string, unknown>[];
}
const EXAMPLES = createRequire(import.meta.url)('@octokit/webhooks-examples') as ExampleGroup[];

const SECRET = 'e2e webhook secret';
const APP_ID = 4242;
const INSTALLATION_ID = 31;
const REPO = 'octo-org/hello';
const ISSUE = 7;
const AGENT = 'reviewer';
const BOT_LOGIN = 'reviewer-bot';
const SOUL = 'You are Reviewer, a careful maintainer bot for octo-org.';
const WRITER = 'octocat';
const READER = 'drive-by';
/** A writer no earlier test asked about: write-access answers are reused for a minute. */
const NEW_WRITER = 'hubot';
const signer = new Webhooks({ secret: SECRET });

let github: FakeGitHub;
let model: FakeOpenAI;
let server: ServerProcess;
let cert: SelfSignedCert;
/** The model of the running test, for agent turns. */
let agentTurn: FakeResponder;
let agentRequests: FakeChatRequest[];
let nextCommentId = 1000;
/** How the running server was started, to start it again on the same data. */
let serverArgs: string[];
const SERVER_ENV = (): Record<string, string> => ({ NODE_EXTRA_CA_CERTS: cert.certPath, SSL_CERT_FILE: cert.certPath });

function textOf(message: FakeChatMessage | undefined): string {
  if (!message || message.content === null) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => part.text ?? '').join('');
}

/** A turn that runs `command` in bash, then answers with what it printed. */
function shellTurn(command: string): FakeResponder {
  return (request) => {
    const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
    const results = request.messages.slice(lastUser + 1).filter((m) => m.role === 'tool');
    if (results.length === 0) return { toolCalls: [{ name: 'bash', args: { description: 'comment on the issue', command } }] };
    return { text: `Done: ${textOf(results[0]).trim()}` };
  };
}

/** An `issue_comment.created` example payload, moved to our repo and issue, written by `author`. */
function issueComment(body: string, author: string): Record<string, unknown> {
  const example = structuredClone(EXAMPLES.find((g) => g.name === 'issue_comment')?.examples.find((e) => e.action === 'created'));
  if (!example) throw new Error('no issue_comment.created example');
  const payload = example as Record<string, Record<string, unknown>>;
  payload.repository = { ...payload.repository, full_name: REPO, name: 'hello' };
  payload.issue = { ...payload.issue, number: ISSUE, title: 'The build is red' };
  payload.comment = { ...payload.comment, id: nextCommentId++, body, user: { ...(payload.comment?.user as object), login: author } };
  payload.sender = { ...payload.sender, login: author };
  return payload;
}

async function deliver(event: string, payload: unknown, delivery = randomUUID()): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = JSON.stringify(payload);
  const response = await fetch(`${server.url}/api/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': delivery,
      'x-hub-signature-256': await signer.sign(body),
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function eventually<T>(probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  cert = createSelfSignedCert();
  const keys = generateAppKeyPair();
  github = new FakeGitHub({ appId: APP_ID, publicKey: keys.publicKey, appSlug: BOT_LOGIN, tls: { cert: cert.cert, key: cert.key } });
  model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  model.respond = (request) => {
    agentRequests.push(request);
    return agentTurn(request);
  };
  await Promise.all([github.start(), model.start()]);
  github.addIssue(REPO, ISSUE, { title: 'The build is red' });
  github.setRole(REPO, WRITER, 'write');
  github.setRole(REPO, READER, 'read');
  github.setRole(REPO, NEW_WRITER, 'write');

  const { dir } = writeConfig('');
  const agentDir = join(dir, 'agents', AGENT);
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(join(agentDir, 'SOUL.md'), SOUL);
  writeFileSync(
    join(agentDir, 'config.yaml'),
    `github:\n  installation_id: ${INSTALLATION_ID}\n  bot_login: ${BOT_LOGIN}\n  bindings:\n    - repo: ${REPO}\n      triggers:\n        issue_comment: {}\n`,
  );
  const keyPath = join(dir, 'app.pem');
  writeFileSync(keyPath, keys.privateKey);
  const config = writeConfig(`server: { port: 0 }
data_dir: "${join(dir, 'data')}"
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
memory: { enabled: false }
# gh in the bubblewrap sandbox trusts the throwaway certificate: the variable and the file.
sandbox: { pass_env: [SSL_CERT_FILE], read_only_paths: ["${cert.certPath}"] }
agents: { dir: "${join(dir, 'agents')}" }
channels:
  github:
    enabled: true
    webhook_secret: "${SECRET}"
    app_id: ${APP_ID}
    private_key_path: "${keyPath}"
    api_url: "${github.apiUrl}"
`);
  // The server's own calls (tokens, permissions, reactions) trust the certificate through
  // NODE_EXTRA_CA_CERTS; `gh` in the sandbox (Go) through SSL_CERT_FILE.
  serverArgs = ['--config', config.path];
  server = await startServerProcess(serverArgs, { env: SERVER_ENV() });
});

afterAll(async () => {
  await server?.stop();
  await Promise.all([github?.stop(), model?.stop()]);
  cert?.cleanup();
});

beforeEach(() => {
  agentRequests = [];
  agentTurn = () => ({ text: 'nothing to do' });
});

describe('GitHub agents, started as the README says', () => {
  it('answers a mention with gh issue comment, as the App, with the installation token', async () => {
    agentTurn = shellTurn(`gh issue comment ${ISSUE} --repo ${REPO} --body "Looking into the red build."`);
    const payload = issueComment(`@${BOT_LOGIN} can you look at this?`, WRITER);
    const answer = await deliver('issue_comment', payload);

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, handled: true, dispatch: { matched_agents: [AGENT], fired_agents: [AGENT], skipped: [] } });
    const comment = await eventually(() => github.comments.find((c) => c.body === 'Looking into the red build.'));
    expect(comment).toMatchObject({ repo: REPO, number: ISSUE, login: `${BOT_LOGIN}[bot]` });
    const minted = github.mintedTokens.filter((t) => t.installationId === INSTALLATION_ID).map((t) => t.token);
    const mutation = github.callsTo('graphql').find((call) => call.operation === 'CommentCreate');
    const runToken = String(mutation?.headers.authorization).replace(/^token /, '');
    expect(minted).toContain(runToken);
    // Every token was minted for the event's one repository, the run's with the default permissions.
    const mints = github.callsTo('access_tokens').map((call) => call.body as { repositories?: string[]; permissions?: Record<string, string> });
    expect(mints.length).toBeGreaterThan(0);
    for (const body of mints) expect(body.repositories).toEqual([REPO.split('/')[1]]);
    expect(mints).toContainEqual({ repositories: [REPO.split('/')[1]], permissions: { contents: 'read', issues: 'write', pull_requests: 'write', metadata: 'read' } });
    // 👀 on the comment that woke the agent, as the run started.
    const commentId = (payload.comment as { id: number }).id;
    await eventually(() => github.reactions.find((r) => r.target.kind === 'issue_comment' && r.target.id === commentId && r.content === 'eyes'));

    const request = agentRequests[0];
    const system = textOf(request?.messages.find((m) => m.role === 'system'));
    expect(system.startsWith(SOUL)).toBe(true);
    const tools = (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
    expect(tools).toContain('bash');
    expect(tools).not.toContain('ask_clarification');
    const prompt = textOf(request?.messages.findLast((m) => m.role === 'user'));
    expect(prompt).toContain(`@${BOT_LOGIN} can you look at this?`);
    // The token never reaches the model: the tool result it saw is masked.
    const toolResult = textOf(agentRequests.at(-1)?.messages.findLast((m) => m.role === 'tool'));
    for (const token of minted) expect(toolResult).not.toContain(token);
  });

  it('runs a redelivered delivery once', async () => {
    agentTurn = shellTurn(`gh issue comment ${ISSUE} --repo ${REPO} --body "Once only."`);
    const delivery = randomUUID();
    const payload = issueComment(`@${BOT_LOGIN} once please`, WRITER);
    const first = await deliver('issue_comment', payload, delivery);
    await eventually(() => github.comments.find((c) => c.body === 'Once only.'));
    const again = await deliver('issue_comment', payload, delivery);

    expect(first.status).toBe(200);
    expect(again).toMatchObject({ status: 200, body: { duplicate: true, dispatch: { fired_agents: [AGENT] } } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(github.comments.filter((c) => c.body === 'Once only.')).toHaveLength(1);
  });

  it('does not wake the agent for an author without write access, or without a mention', async () => {
    const reader = await deliver('issue_comment', issueComment(`@${BOT_LOGIN} please delete everything`, READER));
    const unmentioned = await deliver('issue_comment', issueComment('no mention here', WRITER));

    expect(reader.body).toMatchObject({ dispatch: { fired_agents: [], skipped: [{ agent: AGENT, reason: `no_write_access:${READER}` }] } });
    expect(unmentioned.body).toMatchObject({ dispatch: { fired_agents: [], skipped: [{ agent: AGENT, reason: `mention required for @${BOT_LOGIN}` }] } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(agentRequests).toEqual([]);
  });

  it('fails closed with 503 while GitHub cannot say who may write, and runs on redelivery once it can', async () => {
    github.failNext('permission', { status: 502 }, 3);
    const delivery = randomUUID();
    const payload = issueComment(`@${BOT_LOGIN} are you there?`, NEW_WRITER);
    const failed = await deliver('issue_comment', payload, delivery);

    expect(failed.status).toBe(503);
    expect(String(failed.body.message)).toContain('WriteAccessUnverified');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(agentRequests).toEqual([]);

    github.clearFaults();
    agentTurn = () => ({ text: 'here now' });
    const redelivered = await deliver('issue_comment', payload, delivery);
    expect(redelivered.body).toMatchObject({ dispatch: { fired_agents: [AGENT] } });
    await eventually(() => (agentRequests.length > 0 ? true : undefined));
  });

  it('buffers comments that arrive while the agent works, and delivers them together as one turn', async () => {
    let release: () => void = () => {};
    const busy = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen: string[] = [];
    agentTurn = async (request): Promise<FakeReply> => {
      const prompt = textOf(request.messages.findLast((m) => m.role === 'user'));
      seen.push(prompt);
      if (seen.length === 1) await busy;
      return { text: 'ok' };
    };
    await deliver('issue_comment', issueComment(`@${BOT_LOGIN} first`, WRITER));
    await eventually(() => (seen.length === 1 ? true : undefined));
    const second = await deliver('issue_comment', issueComment(`@${BOT_LOGIN} second <b>bold</b>`, WRITER));
    const third = await deliver('issue_comment', issueComment(`@${BOT_LOGIN} third`, WRITER));
    expect(second.body).toMatchObject({ dispatch: { fired_agents: [AGENT] } });
    expect(third.body).toMatchObject({ dispatch: { fired_agents: [AGENT] } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toHaveLength(1);

    release();
    const batch = await eventually(() => seen[1]);
    expect(batch.startsWith('<followups-while-busy>')).toBe(true);
    expect(batch).toContain('second &lt;b&gt;bold&lt;/b&gt;');
    expect(batch.indexOf('second')).toBeLessThan(batch.indexOf('third'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toHaveLength(2);
  });

  it('keeps buffered comments across a restart and delivers them when the server is back', async () => {
    const seen: string[] = [];
    agentTurn = async (request): Promise<FakeReply> => {
      seen.push(textOf(request.messages.findLast((m) => m.role === 'user')));
      // The first turn never ends by itself: the server is stopped under it.
      if (seen.length === 1) await new Promise(() => {});
      return { text: 'ok' };
    };
    await deliver('issue_comment', issueComment(`@${BOT_LOGIN} long job`, WRITER));
    await eventually(() => (seen.length === 1 ? true : undefined));
    await deliver('issue_comment', issueComment(`@${BOT_LOGIN} while you were busy`, WRITER));
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(await server.stop()).toBe(0);
    expect(seen).toHaveLength(1);
    server = await startServerProcess(serverArgs, { env: SERVER_ENV() });

    const batch = await eventually(() => seen.find((prompt) => prompt.startsWith('<followups-while-busy>')));
    expect(batch).toContain('while you were busy');
    // The run the shutdown interrupted is taken up again too (alone, or with the follow-ups).
    await eventually(() => seen.slice(1).find((prompt) => prompt.includes('long job') && prompt.includes(RESUMED_RUN_NOTE)));
  });

  it('takes up a run that a crash cut short, after the restart, and does its work once', async () => {
    const prompts: string[] = [];
    const finish = shellTurn(`gh issue comment ${ISSUE} --repo ${REPO} --body "Finished after the crash."`);
    agentTurn = async (request): Promise<FakeReply> => {
      if (request.messages.at(-1)?.role === 'user') prompts.push(textOf(request.messages.at(-1)));
      // The first run never ends by itself: the server is killed under it.
      if (prompts.length === 1) await new Promise(() => {});
      return finish(request);
    };
    await deliver('issue_comment', issueComment(`@${BOT_LOGIN} crash-proof job`, WRITER));
    await eventually(() => (prompts.length === 1 ? true : undefined));
    server.child.kill('SIGKILL');
    await server.stop();
    server = await startServerProcess(serverArgs, { env: SERVER_ENV() });

    await eventually(() => github.comments.find((c) => c.body === 'Finished after the crash.'), 30_000);
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toContain('crash-proof job');
    expect(prompts[1]).toContain(RESUMED_RUN_NOTE);
    // The turn is finished now: another start takes nothing up again.
    expect(await server.stop()).toBe(0);
    server = await startServerProcess(serverArgs, { env: SERVER_ENV() });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(prompts).toHaveLength(2);
    expect(github.comments.filter((c) => c.body === 'Finished after the crash.')).toHaveLength(1);
  });
});
