import { describe, expect, it } from 'vitest';
import { DEFAULT_TRIGGERS, githubAgentSchema, resolveTriggers } from '../../../../channels/github/bindings.js';
import {
  type FanOutAgent,
  fanOut,
  githubThreadId,
  isSelfEvent,
  mentionLoginFor,
  mentions,
  targetOf,
  triggerVerdict,
} from '../../../../channels/github/fanout.js';
import { agent, edit, example, lookupOf, type Payload, REPO, trigger } from './payloads.js';

describe('targetOf', () => {
  it.each<[string, Payload, { repo: string; number: number } | undefined]>([
    ['issues', example('issues', 'opened'), { repo: REPO, number: 1 }],
    ['issue_comment', example('issue_comment', 'created'), { repo: REPO, number: 1 }],
    ['pull_request', example('pull_request', 'opened'), { repo: REPO, number: 2 }],
    ['pull_request', edit(example('pull_request', 'opened'), { 'pull_request.number': undefined, number: 9 }), { repo: REPO, number: 9 }],
    ['pull_request_review', example('pull_request_review', 'submitted'), { repo: REPO, number: 2 }],
    ['pull_request_review_comment', example('pull_request_review_comment', 'created'), { repo: REPO, number: 2 }],
    ['ping', example('ping'), undefined],
    ['push', edit(example('issues', 'opened'), {}), undefined],
    ['issues', edit(example('issues', 'opened'), { repository: undefined }), undefined],
    ['issues', edit(example('issues', 'opened'), { 'issue.number': '1' }), undefined],
    ['pull_request_review', edit(example('pull_request_review', 'submitted'), { number: 3, 'pull_request.number': undefined }), undefined],
  ])('%s → %j', (event, payload, expected) => {
    expect(targetOf(event, payload)).toEqual(expected);
  });
});

describe('isSelfEvent', () => {
  const bindingsWith = (mentionLogin?: string) =>
    githubAgentSchema.parse({
      bindings: [
        { repo: 'other/repo', triggers: { issues: {} } },
        { repo: REPO, triggers: { issue_comment: mentionLogin === undefined ? {} : { mention_login: mentionLogin } } },
      ],
    }).bindings;

  it.each<[string, { botLogin?: string; mentionLogin?: string }, string | undefined, boolean]>([
    ['bot_login', { botLogin: 'deerflow-app' }, 'deerflow-app', true],
    ['bot_login with [bot] suffix', { botLogin: 'deerflow-app' }, 'deerflow-app[bot]', true],
    ['bot_login, other case', { botLogin: 'DeerFlow-App' }, 'deerflow-app[bot]', true],
    ['mention_login of another binding', { botLogin: 'deerflow-app', mentionLogin: 'deerflow' }, 'deerflow', true],
    ['mention_login only', { mentionLogin: 'deerflow' }, 'DEERFLOW[bot]', true],
    ['agent name as fallback', {}, 'coder[bot]', true],
    ['agent name is no fallback once bot_login is set', { botLogin: 'deerflow-app' }, 'coder', false],
    ['agent name is no fallback once a mention_login is set', { mentionLogin: 'deerflow' }, 'coder', false],
    ['another bot', { botLogin: 'deerflow-app' }, 'copilot[bot]', false],
    ['a person', {}, 'octocat', false],
    ['no sender', {}, undefined, false],
  ])('%s', (_name, identity, sender, expected) => {
    const bindings = bindingsWith(identity.mentionLogin);
    const coder = { name: 'coder', github: { bot_login: identity.botLogin } };
    expect(isSelfEvent(coder, sender, bindings)).toBe(expected);
  });
});

describe('triggerVerdict', () => {
  const issueComment = (body: string) => edit(example('issue_comment', 'created'), { 'comment.body': body });

  it.each<[string, string, Payload, unknown, { fire: boolean; reason: string }]>([
    ['default PR opened fires', 'pull_request', example('pull_request', 'opened'), {}, { fire: true, reason: 'action=opened' }],
    [
      'default PR synchronize is filtered',
      'pull_request',
      edit(example('pull_request', 'opened'), { action: 'synchronize' }),
      {},
      { fire: false, reason: "action='synchronize' not in ['opened']" },
    ],
    [
      'whitelist overrides the default',
      'pull_request',
      edit(example('pull_request', 'opened'), { action: 'reopened' }),
      { actions: ['opened', 'reopened'] },
      { fire: true, reason: 'action=reopened' },
    ],
    ['empty whitelist blocks all', 'issues', example('issues', 'opened'), { actions: [] }, { fire: false, reason: "action='opened' not in []" }],
    ['actions: null allows any', 'pull_request', edit(example('pull_request', 'opened'), { action: 'closed' }), { actions: null }, { fire: true, reason: 'action=closed' }],
    ['missing action vs whitelist', 'issues', edit(example('issues', 'opened'), { action: undefined }), { actions: ['opened'] }, { fire: false, reason: "action=None not in ['opened']" }],
    ['no action fires ok', 'issues', edit(example('issues', 'opened'), { action: undefined }), {}, { fire: true, reason: 'ok' }],
    ['comment without mention', 'issue_comment', issueComment('looks good'), {}, { fire: false, reason: 'mention required for @deerflow' }],
    ['comment with mention', 'issue_comment', issueComment('hey @deerflow please look'), {}, { fire: true, reason: 'action=created' }],
    ['mention, other case', 'issue_comment', issueComment('hey @DeerFlow'), {}, { fire: true, reason: 'action=created' }],
    ['mention at start of text', 'issue_comment', issueComment('@deerflow help'), {}, { fire: true, reason: 'action=created' }],
    ['mention in parentheses', 'issue_comment', issueComment('(@deerflow)'), {}, { fire: true, reason: 'action=created' }],
    ['mention before punctuation', 'issue_comment', issueComment('thanks, @deerflow!'), {}, { fire: true, reason: 'action=created' }],
    ['longer login is another user', 'issue_comment', issueComment('cc @deerflow-bot'), {}, { fire: false, reason: 'mention required for @deerflow' }],
    ['e-mail address', 'issue_comment', issueComment('mail a@deerflow.com'), {}, { fire: false, reason: 'mention required for @deerflow' }],
    ['underscore before @ still counts', 'issue_comment', issueComment('x_@deerflow'), {}, { fire: true, reason: 'action=created' }],
    ['trigger mention_login wins', 'issue_comment', issueComment('@deerflow'), { mention_login: 'my-bot' }, { fire: false, reason: 'mention required for @my-bot' }],
    ['allow_authors bypasses mention', 'issue_comment', issueComment('no mention'), { allow_authors: ['codertocat'] }, { fire: true, reason: 'allow_authors:Codertocat' }],
    ['allow_authors for others does not help', 'issue_comment', issueComment('no mention'), { allow_authors: ['octocat'] }, { fire: false, reason: 'mention required for @deerflow' }],
    ['allow_authors does not bypass the whitelist', 'pull_request', edit(example('pull_request', 'opened'), { action: 'closed' }), { allow_authors: ['Codertocat'] }, { fire: false, reason: "action='closed' not in ['opened']" }],
    ['issues require_mention in body', 'issues', edit(example('issues', 'opened'), { 'issue.body': 'ping @deerflow' }), { require_mention: true }, { fire: true, reason: 'action=opened' }],
    ['issues require_mention without', 'issues', example('issues', 'opened'), { require_mention: true }, { fire: false, reason: 'mention required for @deerflow' }],
    ['PR require_mention scans the PR body', 'pull_request', edit(example('pull_request', 'opened'), { 'pull_request.body': '@deerflow review' }), { require_mention: true }, { fire: true, reason: 'action=opened' }],
    ['review require_mention scans the review body', 'pull_request_review', edit(example('pull_request_review', 'submitted'), { 'review.body': 'LGTM @deerflow' }), { require_mention: true }, { fire: true, reason: 'action=submitted' }],
    ['review comment default needs a mention', 'pull_request_review_comment', example('pull_request_review_comment', 'created'), {}, { fire: false, reason: 'mention required for @deerflow' }],
  ])('%s', (_name, event, payload, written, expected) => {
    expect(triggerVerdict(event, payload, trigger(event, written), 'deerflow')).toEqual(expected);
  });

  // allow_authors reads the author of what the event is about, not the sender.
  it.each<[string, Payload]>([
    ['issue_comment', edit(example('issue_comment', 'created'), { 'comment.user.login': 'alice', 'sender.login': 'mallory' })],
    ['pull_request_review_comment', edit(example('pull_request_review_comment', 'created'), { 'comment.user.login': 'alice', 'sender.login': 'mallory' })],
    ['pull_request', edit(example('pull_request', 'opened'), { 'pull_request.user.login': 'alice', 'sender.login': 'mallory' })],
    ['pull_request_review', edit(example('pull_request_review', 'submitted'), { 'review.user.login': 'alice', 'sender.login': 'mallory' })],
    ['issues', edit(example('issues', 'opened'), { 'issue.user.login': 'alice', 'sender.login': 'mallory' })],
  ])('allow_authors matches the %s author', (event, payload) => {
    const allowAlice = trigger(event, { require_mention: true, allow_authors: ['ALICE'] });
    expect(triggerVerdict(event, payload, allowAlice, 'deerflow')).toEqual({ fire: true, reason: 'allow_authors:alice' });
    const allowMallory = trigger(event, { require_mention: true, allow_authors: ['mallory'] });
    expect(triggerVerdict(event, payload, allowMallory, 'deerflow').fire).toBe(false);
  });

  it('escapes the login in the mention pattern', () => {
    expect(mentions('@aXb', 'a.b')).toBe(false);
    expect(mentions('@a.b', 'a.b')).toBe(true);
  });
});

describe('DEFAULT_TRIGGERS merge', () => {
  it('fills only the fields the binding left out', () => {
    const [binding] = githubAgentSchema.parse({
      bindings: [
        {
          repo: REPO,
          triggers: {
            pull_request: { require_mention: true },
            issue_comment: { require_mention: false },
            pull_request_review_comment: null,
            issues: {},
          },
        },
      ],
    }).bindings;
    const resolved = resolveTriggers(binding!);
    expect(resolved.pull_request).toEqual({ actions: ['opened'], requireMention: true, allowAuthors: [], mentionLogin: undefined });
    expect(resolved.issue_comment).toMatchObject({ actions: null, requireMention: false });
    expect(resolved.pull_request_review_comment).toMatchObject({ actions: null, requireMention: true });
    expect(resolved.issues).toMatchObject({ actions: null, requireMention: false });
    expect(resolved.ping).toBeUndefined();
    expect(DEFAULT_TRIGGERS.pull_request).toEqual({ actions: ['opened'] });
  });

  it.each<[string, unknown, string]>([
    ['duplicate repo', { bindings: [{ repo: 'a/b' }, { repo: 'A/B' }] }, 'duplicate binding for repo A/B'],
    ['unknown event', { bindings: [{ repo: 'a/b', triggers: { push: {} } }] }, 'push'],
    ['typo in a trigger', { bindings: [{ repo: 'a/b', triggers: { issues: { require_mentions: true } } }] }, 'require_mentions'],
    ['bad repo', { bindings: [{ repo: 'just-a-name' }] }, 'owner/name'],
    ['missing repo', { bindings: [{ triggers: {} }] }, 'is required'],
    ['bad installation id', { installation_id: 0 }, 'positive whole number'],
    ['bad trusted_authors', { trusted_authors: 'everyone' }, "'any'"],
  ])('rejects %s', (_name, block, message) => {
    const result = githubAgentSchema.safeParse(block);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.message).join('\n')).toContain(message);
  });

  it('treats blank logins as unset', () => {
    const config = githubAgentSchema.parse({ bot_login: '   ', bindings: [{ repo: 'a/b', triggers: { issues: { mention_login: ' ' } } }] });
    expect(config.bot_login).toBeUndefined();
    expect(resolveTriggers(config.bindings[0]!).issues?.mentionLogin).toBeUndefined();
    expect(config.trusted_authors).toBe('write');
  });
});

describe('mentionLoginFor', () => {
  it.each<[string, string | undefined, string | undefined, string | undefined, string]>([
    ['trigger mention_login first', 'trigger-login', 'bot-login', 'operator', 'trigger-login'],
    ['then bot_login', undefined, 'bot-login', 'operator', 'bot-login'],
    ['then the operator default', undefined, undefined, ' operator ', 'operator'],
    ['then the agent name', undefined, undefined, undefined, 'coder'],
    ['blank operator default is unset', undefined, undefined, '   ', 'coder'],
  ])('%s', (_name, mentionLogin, botLogin, operatorDefault, expected) => {
    const coder = { name: 'coder', github: { bot_login: botLogin } };
    expect(mentionLoginFor({ mentionLogin }, coder, operatorDefault)).toBe(expected);
  });
});

describe('githubThreadId', () => {
  it('is uuid5 of "<repo>#<number>:<agent>" under the GitHub namespace', () => {
    // Python: uuid.uuid5(uuid.UUID('a3f4b2c1-7e8d-4f6a-b9c0-1234567890ab'), 'octo-org/hello-world#7:coder')
    expect(githubThreadId('octo-org/hello-world', 7, 'coder')).toBe('99e2a26c-4501-5a29-ab59-bc60ab0cdb76');
    expect(githubThreadId('octo-org/hello-world', 7, 'reviewer')).toBe('936938aa-3192-5a3f-98a5-8c31d16b8a66');
  });

  it('differs per number and repo, and is stable', () => {
    const id = githubThreadId(REPO, 1, 'coder');
    expect(githubThreadId(REPO, 1, 'coder')).toBe(id);
    expect(githubThreadId(REPO, 2, 'coder')).not.toBe(id);
    expect(githubThreadId('other/repo', 1, 'coder')).not.toBe(id);
  });

  it.each<[string, number, string]>([
    ['no-slash', 1, 'coder'],
    [REPO, 1.5, 'coder'],
    [REPO, 1, '  '],
  ])('rejects (%s, %s, %j)', (repo, number, name) => {
    expect(() => githubThreadId(repo, number, name)).toThrow(RangeError);
  });
});

describe('fanOut', () => {
  const coder = agent('coder', { bindings: [{ repo: REPO, triggers: { issue_comment: {}, pull_request: {} } }] }, 'user-1');
  const reviewer = agent('reviewer', {
    bot_login: 'reviewer-app',
    installation_id: 42,
    recursion_limit: 80,
    trusted_authors: 'any',
    bindings: [{ repo: REPO.toLowerCase(), triggers: { issue_comment: { mention_login: 'reviewer-app' } } }],
  });

  it('skips deliveries without an issue or PR', () => {
    const result = fanOut({ event: 'ping', deliveryId: 'd-1', payload: example('ping'), registry: lookupOf([coder]) });
    expect(result).toEqual({ messages: [], summary: { matched_agents: [], fired_agents: [], skipped: [{ reason: 'no_target' }] } });
  });

  it('returns an empty summary when no agent is bound', () => {
    const result = fanOut({ event: 'issues', deliveryId: 'd-1', payload: example('issues', 'opened'), registry: lookupOf([coder]) });
    expect(result).toEqual({ messages: [], summary: { matched_agents: [], fired_agents: [], skipped: [] } });
  });

  it('fires the mentioned agent and reports why the other was skipped', () => {
    const payload = edit(example('issue_comment', 'created'), { 'comment.body': '@coder please fix', 'sender.login': 'alice', 'comment.user.login': 'alice' });
    const { messages, summary } = fanOut({ event: 'issue_comment', deliveryId: 'd-1', payload, registry: lookupOf([coder, reviewer]) });
    expect(summary).toEqual({
      matched_agents: ['coder', 'reviewer'],
      fired_agents: ['coder'],
      skipped: [{ agent: 'reviewer', reason: 'mention required for @reviewer-app' }],
    });
    expect(messages).toHaveLength(1);
    const [message] = messages;
    expect(message).toMatchObject({
      agent: 'coder',
      ownerUserId: 'user-1',
      threadId: githubThreadId(REPO, 1, 'coder'),
      reason: 'action=created',
      github: { repo: REPO, number: 1, event: 'issue_comment', deliveryId: 'd-1' },
      needsWriteAccessCheck: { login: 'alice' },
      inbound: {
        channel: 'github',
        chatId: REPO,
        topicId: '1:coder',
        userId: 'alice',
        workspaceId: REPO,
        messageId: 'd-1:user-1:coder',
        kind: 'chat',
        isPrivateChat: false,
      },
    });
    expect(message!.inbound.text).toContain('@coder please fix');
  });

  it('gives two agents on one issue their own threads, ids and agent settings', () => {
    const payload = edit(example('issue_comment', 'created'), { 'comment.body': '@coder and @reviewer-app' });
    const { messages, summary } = fanOut({ event: 'issue_comment', deliveryId: 'd-2', payload, registry: lookupOf([coder, reviewer]) });
    expect(summary.fired_agents).toEqual(['coder', 'reviewer']);
    const [first, second] = messages;
    expect(first!.threadId).not.toBe(second!.threadId);
    expect(second).toMatchObject({
      inbound: { messageId: 'd-2::reviewer', topicId: '1:reviewer' },
      github: { installationId: 42, recursionLimit: 80 },
    });
    // trusted_authors: any → no write-access check.
    expect(second!.needsWriteAccessCheck).toBeUndefined();
    expect(second!.ownerUserId).toBeUndefined();
  });

  it('leaves messageId unset without a delivery id and falls back to the github user', () => {
    const payload = edit(example('pull_request', 'opened'), { sender: undefined });
    const { messages } = fanOut({ event: 'pull_request', payload, registry: lookupOf([coder]) });
    expect(messages[0]!.inbound.messageId).toBeUndefined();
    expect(messages[0]!.github.deliveryId).toBeUndefined();
    expect(messages[0]!.inbound.userId).toBe('github');
    expect(messages[0]!.needsWriteAccessCheck).toEqual({ login: 'Codertocat' });
  });

  it('skips allow_authors from the write-access check', () => {
    const trusting = agent('coder', { bindings: [{ repo: REPO, triggers: { issue_comment: { allow_authors: ['Codertocat'] } } }] });
    const { messages } = fanOut({ event: 'issue_comment', deliveryId: 'd', payload: example('issue_comment', 'created'), registry: lookupOf([trusting]) });
    expect(messages[0]).toMatchObject({ reason: 'allow_authors:Codertocat' });
    expect(messages[0]!.needsWriteAccessCheck).toBeUndefined();
  });

  it('skips self events only for the agent that sent them', () => {
    const payload = edit(example('issue_comment', 'created'), { 'sender.login': 'reviewer-app[bot]', 'comment.body': '@coder @reviewer-app' });
    const { summary } = fanOut({ event: 'issue_comment', deliveryId: 'd', payload, registry: lookupOf([coder, reviewer]) });
    expect(summary).toEqual({
      matched_agents: ['coder', 'reviewer'],
      fired_agents: ['coder'],
      skipped: [{ agent: 'reviewer', reason: 'self_event' }],
    });
  });

  it('uses the operator default mention login below bot_login', () => {
    const payload = edit(example('issue_comment', 'created'), { 'comment.body': 'hi @deerflow-bot' });
    const run = (defaultMentionLogin?: string) =>
      fanOut({ event: 'issue_comment', deliveryId: 'd', payload, registry: lookupOf([coder]), defaultMentionLogin }).summary;
    expect(run('deerflow-bot').fired_agents).toEqual(['coder']);
    expect(run('  ').skipped).toEqual([{ agent: 'coder', reason: 'mention required for @coder' }]);
  });

  describe('redundant review-comment gate', () => {
    const companion = edit(example('pull_request_review_comment', 'created'), { 'comment.body': '@coder nit' });
    const bound = (name: string, triggers: unknown, repo = REPO): FanOutAgent =>
      agent(name, { bindings: [{ repo, triggers }] });

    it.each<[string, FanOutAgent[], Payload, { fired: string[]; skipped: { agent: string; reason: string }[] }]>([
      [
        'dropped when the binding also gets the review',
        [bound('coder', { pull_request_review: {}, pull_request_review_comment: {} })],
        companion,
        { fired: [], skipped: [{ agent: 'coder', reason: 'redundant_review_comment' }] },
      ],
      [
        'kept for a binding without a review trigger',
        [bound('coder', { pull_request_review_comment: {} })],
        companion,
        { fired: ['coder'], skipped: [] },
      ],
      [
        'kept when the review trigger needs a mention',
        [bound('coder', { pull_request_review: { require_mention: true }, pull_request_review_comment: {} })],
        companion,
        { fired: ['coder'], skipped: [] },
      ],
      [
        'kept for a reply in a review thread',
        [bound('coder', { pull_request_review: {}, pull_request_review_comment: {} })],
        edit(companion, { 'comment.in_reply_to_id': 123 }),
        { fired: ['coder'], skipped: [] },
      ],
      [
        'kept for a comment without a review',
        [bound('coder', { pull_request_review: {}, pull_request_review_comment: {} })],
        edit(companion, { 'comment.pull_request_review_id': null }),
        { fired: ['coder'], skipped: [] },
      ],
      [
        'the binding’s own failing reason wins',
        [bound('coder', { pull_request_review: {}, pull_request_review_comment: {} })],
        edit(companion, { 'comment.body': 'no mention' }),
        { fired: [], skipped: [{ agent: 'coder', reason: 'mention required for @coder' }] },
      ],
      [
        'decided per agent',
        [bound('coder', { pull_request_review: {}, pull_request_review_comment: { require_mention: false } }), bound('linter', { pull_request_review_comment: { require_mention: false } })],
        companion,
        { fired: ['linter'], skipped: [{ agent: 'coder', reason: 'redundant_review_comment' }] },
      ],
    ])('%s', (_name, agents, payload, expected) => {
      const { summary } = fanOut({ event: 'pull_request_review_comment', deliveryId: 'd', payload, registry: lookupOf(agents) });
      expect({ fired: summary.fired_agents, skipped: summary.skipped }).toEqual(expected);
    });

    it('is not fooled by a review trigger on another repo', () => {
      const coderTwoRepos = agent('coder', {
        bindings: [
          { repo: REPO, triggers: { pull_request_review_comment: {} } },
          { repo: 'other/repo', triggers: { pull_request_review: {} } },
        ],
      });
      const { summary } = fanOut({ event: 'pull_request_review_comment', deliveryId: 'd', payload: companion, registry: lookupOf([coderTwoRepos]) });
      expect(summary.fired_agents).toEqual(['coder']);
    });
  });
});
