import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitHubAgentRegistry } from '../../../channels/github/agents.js';
import { createGitHubDispatch, type GitHubDispatchDeps, githubDataOf, WriteAccessUnverifiedError } from '../../../channels/github/dispatch.js';
import { githubThreadId } from '../../../channels/github/fanout.js';
import { InstallationTokens } from '../../../channels/github/tokens.js';
import type { InboundIntake, InboundMessage, InboundReservation } from '../../../src/channel/types.js';
import { AppError } from '../../../src/errors.js';
import { createLogger, type Logger } from '../../../src/logger.js';
import { type AppKeyPair, FakeGitHub, generateAppKeyPair, type RepoRole } from '../../fakes/github/index.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { edit, example, type Payload } from '../../unit/channels/github/payloads.js';

/**
 * `createGitHubDispatch` over a real agents folder, real installation tokens and real permission
 * checks against the fake GitHub, with real `issue_comment` payloads from `@octokit/webhooks-examples`.
 */

const APP_ID = 4242;
/** The example payload's repo, issue, comment and author. */
const REPO = 'Codertocat/Hello-World';
const ISSUE = 1;
const COMMENT_ID = 492700400;
const AUTHOR = 'Codertocat';
const NOW_MS = 1_700_000_000_000;
const DELIVERY = 'delivery-1';

let keys: AppKeyPair;
let fake: FakeGitHub;
let agentsDir: string;
let logLines: string[];
let logger: Logger;

beforeAll(() => {
  keys = generateAppKeyPair();
});

beforeEach(async () => {
  fake = new FakeGitHub({ appId: APP_ID, publicKey: keys.publicKey });
  await fake.start();
  agentsDir = mkdtempSync(join(tmpdir(), 'dfc-gh-dispatch-'));
  logLines = [];
  logger = createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } });
});

afterEach(async () => {
  await fake.stop();
  rmSync(agentsDir, { recursive: true, force: true });
});

/** Writes `agents/<name>/config.yaml` with one binding on {@link REPO}. */
function writeAgent(name: string, options: { github?: string; triggers?: string; owner?: string } = {}): void {
  const lines = [
    ...(options.owner === undefined ? [] : [`owner: ${options.owner}`]),
    'github:',
    ...(options.github ?? '').split('\n').filter((line) => line !== '').map((line) => `  ${line}`),
    '  bindings:',
    `    - repo: ${REPO}`,
    `      triggers: {issue_comment: ${options.triggers ?? '{}'}}`,
  ];
  mkdirSync(join(agentsDir, name), { recursive: true });
  writeFileSync(join(agentsDir, name, 'config.yaml'), `${lines.join('\n')}\n`);
}

function comment(body: string): Payload {
  return edit(example('issue_comment', 'created'), { 'comment.body': body });
}

function realTokens(): InstallationTokens {
  return new InstallationTokens({ appId: APP_ID, privateKey: keys.privateKey, apiUrl: fake.apiUrl, logger });
}

async function dispatchWith(
  options: { intake?: InboundIntake; tokens?: GitHubDispatchDeps['tokens'] | null; users?: Record<string, string> } = {},
) {
  const intake = options.intake ?? new RecordingIntake();
  const users = options.users ?? {};
  const lookups: string[] = [];
  const dispatch = createGitHubDispatch({
    registry: await GitHubAgentRegistry.load({ agentsDir, logger }),
    intake,
    tokens: options.tokens === null ? undefined : (options.tokens ?? realTokens()),
    apiUrl: fake.apiUrl,
    defaultMentionLogin: undefined,
    findUserId: async (idOrName) => {
      lookups.push(idOrName);
      return users[idOrName];
    },
    logger,
    now: () => NOW_MS,
  });
  return { dispatch, intake, lookups };
}

/** An intake with `capacity` slots that counts reservations still held (neither committed nor released). */
class BoundedIntake implements InboundIntake {
  readonly committed: InboundMessage[] = [];
  held = 0;

  constructor(private readonly capacity: number) {}

  async reserve(): Promise<InboundReservation> {
    if (this.held + this.committed.length >= this.capacity) {
      throw new AppError('INBOUND_QUEUE_FULL', 'inbound queue is full', { status: 503 });
    }
    this.held += 1;
    let isSettled = false;
    const settle = (): void => {
      if (isSettled) throw new Error('reservation settled twice');
      isSettled = true;
      this.held -= 1;
    };
    return {
      commit: async (message) => {
        settle();
        this.committed.push(message);
      },
      release: settle,
    };
  }
}

describe('createGitHubDispatch', () => {
  it('publishes a mention by a writer with everything the run needs', async () => {
    writeAgent('coder', { github: 'installation_id: 7\nrecursion_limit: 40' });
    fake.setRole(REPO, AUTHOR, 'write');
    const { dispatch, intake } = await dispatchWith();

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder please fix this'));

    expect(summary).toEqual({ matched_agents: ['coder'], fired_agents: ['coder'], skipped: [] });
    const committed = (intake as RecordingIntake).committed;
    expect(committed).toHaveLength(1);
    const message = committed[0]!;
    expect(message).toMatchObject({
      channel: 'github',
      chatId: REPO,
      topicId: `${ISSUE}:coder`,
      workspaceId: REPO,
      userId: AUTHOR,
      messageId: `${DELIVERY}::coder`,
      kind: 'chat',
      isPrivateChat: false,
      receivedAt: NOW_MS,
      replyTo: {},
      ownerUserId: 'default',
      preferredThreadId: githubThreadId(REPO, ISSUE, 'coder'),
      agentName: 'coder',
      recursionLimit: 40,
      senderIsAllowlisted: true,
    });
    const data = {
      repo: REPO,
      number: ISSUE,
      event: 'issue_comment',
      deliveryId: DELIVERY,
      installationId: 7,
      reaction: { kind: 'issue_comment', id: COMMENT_ID },
    };
    expect(message.platformData).toEqual(data);
    expect(githubDataOf(message)).toEqual(data);
    expect(message.text).toContain('please fix this');

    // The check ran as the agent's installation, for the comment's author.
    const [check] = fake.callsTo('permission');
    expect(check?.path).toBe(`/api/v3/repos/${REPO}/collaborators/${AUTHOR}/permission`);
    expect(check?.headers.authorization).toBe(`token ${fake.mintedTokens[0]?.token}`);
    expect(fake.mintedTokens.map((minted) => minted.installationId)).toEqual([7]);
    for (const { token } of fake.mintedTokens) expect(logLines.join('\n')).not.toContain(token);
  });

  it('leaves the recursion limit to the channel when the agent sets none', async () => {
    writeAgent('coder', { github: 'trusted_authors: any' });
    const { dispatch, intake } = await dispatchWith();
    await dispatch('issue_comment', DELIVERY, comment('@coder hi'));
    const [message] = (intake as RecordingIntake).committed;
    expect(message).toBeDefined();
    expect('recursionLimit' in message!).toBe(false);
    expect(message!.platformData).not.toHaveProperty('installationId');
  });

  it.each<[RepoRole]>([['write'], ['maintain'], ['admin']])('runs for a %s author', async (role) => {
    writeAgent('coder', { github: 'installation_id: 7' });
    fake.setRole(REPO, AUTHOR, role);
    const { dispatch, intake } = await dispatchWith();
    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder go'));
    expect(summary.fired_agents).toEqual(['coder']);
    expect((intake as RecordingIntake).committed.map((m) => m.agentName)).toEqual(['coder']);
  });

  it.each<[string, RepoRole | undefined]>([
    ['read', 'read'],
    ['triage', 'triage'],
    ['none', 'none'],
    ['not a collaborator (404)', undefined],
  ])('skips a %s author with no_write_access and publishes nothing', async (_name, role) => {
    writeAgent('coder', { github: 'installation_id: 7' });
    if (role !== undefined) fake.setRole(REPO, AUTHOR, role);
    const { dispatch, intake } = await dispatchWith();

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder go'));

    expect(summary).toEqual({ matched_agents: ['coder'], fired_agents: [], skipped: [{ agent: 'coder', reason: `no_write_access:${AUTHOR}` }] });
    expect((intake as RecordingIntake).committed).toEqual([]);
    expect((intake as RecordingIntake).reserved).toBe(0);
    expect(fake.callsTo('permission')).toHaveLength(1);
  });

  it('runs as the owner named in config.yaml, resolved to its account id', async () => {
    writeAgent('coder', { owner: 'alice', github: 'trusted_authors: any' });
    const { dispatch, intake, lookups } = await dispatchWith({ users: { alice: 'user-42' } });

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder go'));

    expect(summary.fired_agents).toEqual(['coder']);
    expect(lookups).toEqual(['alice']);
    const [message] = (intake as RecordingIntake).committed;
    expect(message?.ownerUserId).toBe('user-42');
    // The owner scopes the dedupe id, so two owners' agents of one name stay distinct.
    expect(message?.messageId).toBe(`${DELIVERY}:alice:coder`);
  });

  it('skips an agent whose owner is not an account here', async () => {
    writeAgent('coder', { owner: 'ghost', github: 'trusted_authors: any' });
    const { dispatch, intake } = await dispatchWith();

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder go'));

    expect(summary).toEqual({ matched_agents: ['coder'], fired_agents: [], skipped: [{ agent: 'coder', reason: 'unknown_owner' }] });
    expect((intake as RecordingIntake).committed).toEqual([]);
  });

  it('never asks GitHub about the author for trusted_authors: any', async () => {
    writeAgent('coder', { github: 'installation_id: 7\ntrusted_authors: any' });
    const { dispatch, intake } = await dispatchWith();

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder go'));

    expect(summary.fired_agents).toEqual(['coder']);
    expect((intake as RecordingIntake).committed).toHaveLength(1);
    expect(fake.callsTo('permission')).toHaveLength(0);
  });

  it('never asks GitHub about an author the trigger allows by name, even without a mention', async () => {
    writeAgent('coder', { github: 'installation_id: 7', triggers: '{allow_authors: [codertocat]}' });
    const { dispatch, intake } = await dispatchWith();

    const summary = await dispatch('issue_comment', DELIVERY, comment('no mention at all'));

    expect(summary).toEqual({ matched_agents: ['coder'], fired_agents: ['coder'], skipped: [] });
    expect((intake as RecordingIntake).committed.map((m) => m.agentName)).toEqual(['coder']);
    expect(fake.callsTo('permission')).toHaveLength(0);
  });

  it.each<[string, string, 'real' | 'none']>([
    ['the agent has no installation_id', '', 'real'],
    ['no GitHub App is configured', 'installation_id: 7', 'none'],
  ])('skips write_access_unverifiable when %s', async (_name, github, tokens) => {
    writeAgent('coder', { github });
    fake.setRole(REPO, AUTHOR, 'admin');
    const { dispatch, intake } = await dispatchWith({ tokens: tokens === 'none' ? null : undefined });

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder go'));

    expect(summary).toEqual({ matched_agents: ['coder'], fired_agents: [], skipped: [{ agent: 'coder', reason: 'write_access_unverifiable' }] });
    expect((intake as RecordingIntake).committed).toEqual([]);
    expect(fake.callsTo('permission')).toHaveLength(0);
  });

  it('rejects with WriteAccessUnverifiedError when the check fails, after publishing the agents that need none', async () => {
    writeAgent('coder', { github: 'installation_id: 7' });
    writeAgent('helper', { github: 'trusted_authors: any' });
    fake.setRole(REPO, AUTHOR, 'write');
    fake.failNext('permission', { status: 500 }, Number.POSITIVE_INFINITY);
    const { dispatch, intake } = await dispatchWith();

    await expect(dispatch('issue_comment', DELIVERY, comment('@coder @helper go'))).rejects.toBeInstanceOf(WriteAccessUnverifiedError);

    expect((intake as RecordingIntake).committed.map((m) => m.agentName)).toEqual(['helper']);
    expect(fake.callsTo('permission').length).toBeGreaterThan(0);
    for (const { token } of fake.mintedTokens) expect(logLines.join('\n')).not.toContain(token);
  });

  it('rejects with WriteAccessUnverifiedError when the installation token cannot be minted', async () => {
    writeAgent('coder', { github: 'installation_id: 7' });
    fake.setRole(REPO, AUTHOR, 'write');
    fake.failNext('access_tokens', { status: 502 }, Number.POSITIVE_INFINITY);
    const { dispatch, intake } = await dispatchWith();

    await expect(dispatch('issue_comment', DELIVERY, comment('@coder go'))).rejects.toBeInstanceOf(WriteAccessUnverifiedError);

    expect((intake as RecordingIntake).committed).toEqual([]);
    expect(fake.callsTo('permission')).toHaveLength(0);
  });

  it('publishes nothing when the intake is full, and holds no reservation', async () => {
    writeAgent('coder', { github: 'trusted_authors: any' });
    writeAgent('helper', { github: 'trusted_authors: any' });
    const intake = new BoundedIntake(1);
    const { dispatch } = await dispatchWith({ intake });

    const failure = await dispatch('issue_comment', DELIVERY, comment('@coder @helper go')).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).code).toBe('INBOUND_QUEUE_FULL');
    expect(intake.committed).toEqual([]);
    expect(intake.held).toBe(0);
  });

  it('propagates a full queue that refuses every slot', async () => {
    writeAgent('coder', { github: 'trusted_authors: any' });
    writeAgent('helper', { github: 'trusted_authors: any' });
    const intake = new RecordingIntake();
    intake.isFull = true;
    const { dispatch } = await dispatchWith({ intake });

    await expect(dispatch('issue_comment', DELIVERY, comment('@coder @helper go'))).rejects.toMatchObject({ code: 'INBOUND_QUEUE_FULL' });
    expect(intake.committed).toEqual([]);
  });

  it('lists only published agents as fired and says why each other one was skipped', async () => {
    writeAgent('coder', { github: 'installation_id: 7' });
    writeAgent('ghosted', { owner: 'ghost', github: 'trusted_authors: any' });
    writeAgent('helper', { github: 'trusted_authors: any' });
    writeAgent('quiet', { github: 'trusted_authors: any' });
    writeAgent('unbound', { github: '' });
    fake.setRole(REPO, AUTHOR, 'read');
    const { dispatch, intake } = await dispatchWith();

    const summary = await dispatch('issue_comment', DELIVERY, comment('@coder @ghosted @helper @unbound go'));

    expect(summary).toEqual({
      matched_agents: ['coder', 'ghosted', 'helper', 'quiet', 'unbound'],
      fired_agents: ['helper'],
      skipped: [
        { agent: 'quiet', reason: 'mention required for @quiet' },
        { agent: 'coder', reason: `no_write_access:${AUTHOR}` },
        { agent: 'ghosted', reason: 'unknown_owner' },
        { agent: 'unbound', reason: 'write_access_unverifiable' },
      ],
    });
    expect((intake as RecordingIntake).committed.map((m) => m.agentName)).toEqual(['helper']);
  });
});
