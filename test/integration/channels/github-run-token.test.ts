import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitHubChannel } from '../../../channels/github/adapter.js';
import { githubAgentSchema } from '../../../channels/github/bindings.js';
import { githubConfigSchema } from '../../../channels/github/config.js';
import type { GitHubMessageData } from '../../../channels/github/dispatch.js';
import type { InboundMessage, JsonValue } from '../../../src/channel/types.js';
import { type AppKeyPair, FakeGitHub, generateAppKeyPair } from '../../fakes/github/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { CapturedLogs } from './malformed-events.js';

/**
 * The installation token of a GitHub run reaches only that run: minted for the event's one
 * repository with the agent's permissions, handed to that run's sandbox secrets, and found
 * nowhere else (not `process.env`, not a log line, not another run's environment).
 */

const APP_ID = 5151;
const INSTALLATION = 77;
let keys: AppKeyPair;
let fake: FakeGitHub;
let apiUrl: string;

beforeAll(async () => {
  keys = generateAppKeyPair();
  fake = new FakeGitHub({ appId: APP_ID, publicKey: keys.publicKey, appSlug: 'deerflow-bot' });
  apiUrl = await fake.start();
});
afterAll(() => fake.stop());

function runMessage(repo: string, extra: Partial<GitHubMessageData> = {}): InboundMessage {
  const data: GitHubMessageData = { repo, number: 1, event: 'issue_comment', installationId: INSTALLATION, ...extra };
  return {
    channel: 'github',
    chatId: repo,
    topicId: `1:agent`,
    userId: 'octocat',
    senderIsAllowlisted: true,
    workspaceId: repo,
    messageId: `m-${repo}`,
    text: 'hello',
    kind: 'chat',
    isPrivateChat: false,
    receivedAt: Date.now(),
    replyTo: {},
    platformData: data as unknown as Record<string, JsonValue>,
  };
}

describe('GitHub run tokens', () => {
  it("scope each run's token to its repository and hand it only to that run's sandbox secrets", async () => {
    const logs = new CapturedLogs();
    const config = githubConfigSchema.parse({ enabled: true, app_id: APP_ID, private_key: keys.privateKey, api_url: apiUrl, webhook_secret: 's' });
    const adapter = createGitHubChannel(config, testChannelDeps({ intake: new RecordingIntake(), commands: [], logger: logs.logger }));
    const hooks = adapter.runHooks;
    if (hooks?.sandboxEnvironment === undefined) throw new Error('the GitHub channel must give runs an environment');
    const before = fake.callsTo('access_tokens').length;

    const first = await hooks.sandboxEnvironment(runMessage('Octo-Org/Hello-World'));
    const second = await hooks.sandboxEnvironment(runMessage('Octo-Org/Spoon-Knife', { tokenPermissions: { contents: 'write', pull_requests: 'write' } }));

    const requests = fake.callsTo('access_tokens').slice(before).map((call) => call.body);
    expect(requests).toEqual([
      { repositories: ['Hello-World'], permissions: { contents: 'read', issues: 'write', pull_requests: 'write', metadata: 'read' } },
      { repositories: ['Spoon-Knife'], permissions: { contents: 'write', pull_requests: 'write' } },
    ]);
    const [tokenA, tokenB] = fake.mintedTokens.slice(-2).map((minted) => minted.token);
    expect(first.secrets).toMatchObject({ GH_TOKEN: tokenA, GITHUB_TOKEN: tokenA });
    expect(second.secrets).toMatchObject({ GH_TOKEN: tokenB, GITHUB_TOKEN: tokenB });
    expect(tokenA).not.toBe(tokenB);
    // Secrets only: never among the plain variables, never in the server's environment or logs.
    for (const token of [tokenA, tokenB]) {
      expect(Object.values(first.variables ?? {})).not.toContain(token);
      expect(Object.values(second.variables ?? {})).not.toContain(token);
      expect(Object.values(process.env)).not.toContain(token);
      expect(JSON.stringify(logs.lines)).not.toContain(token);
    }
  });

  it("reads an agent's token_permissions, and refuses levels other than read and write", () => {
    expect(githubAgentSchema.parse({ token_permissions: { contents: 'write' } }).token_permissions).toEqual({ contents: 'write' });
    expect(githubAgentSchema.parse({}).token_permissions).toBeUndefined();
    expect(githubAgentSchema.safeParse({ token_permissions: { contents: 'admin' } }).success).toBe(false);
    expect(githubAgentSchema.safeParse({ token_permissions: { 'Contents!': 'read' } }).success).toBe(false);
  });

  it('gives a run without an installation no token at all', async () => {
    const config = githubConfigSchema.parse({ enabled: true, app_id: APP_ID, private_key: keys.privateKey, api_url: apiUrl, webhook_secret: 's' });
    const adapter = createGitHubChannel(config, testChannelDeps({ intake: new RecordingIntake(), commands: [], logger: new CapturedLogs().logger }));
    const environment = await adapter.runHooks?.sandboxEnvironment?.(runMessage('Octo-Org/Hello-World', { installationId: undefined }));
    expect(environment?.secrets).toBeUndefined();
  });
});
