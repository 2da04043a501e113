import { v5 as uuidv5 } from 'uuid';
import type { InboundMessage } from '../../src/channel/types.js';
import type { GitHubAgentConfig, GitHubBinding, GitHubTrigger } from './bindings.js';
import { buildPrompt } from './prompts.js';
import type { ReactionTarget } from './reactions.js';
import type { TokenPermissionLevel } from './tokens.js';

/**
 * One webhook delivery → one inbound message per bound agent that should act on it (reference
 * §7.3). Pure: no I/O, no clock. The caller verifies the delivery, refreshes the registry,
 * checks write access where a message asks for it, and publishes.
 */

/** What the fan-out needs to know about an agent. */
export interface FanOutAgent {
  /** The agent's folder name; part of the thread id and the topic. */
  name: string;
  /** `owner` from config.yaml as written (a server user id or name); absent = the default owner. */
  owner?: string | undefined;
  github: GitHubAgentConfig;
}

/** An agent bound to `(repo, event)`, with the binding's resolved trigger for that event. */
export interface FanOutMatch {
  agent: FanOutAgent;
  trigger: GitHubTrigger;
}

/** The in-memory index the fan-out reads; `GitHubAgentRegistry` implements it. */
export interface GitHubAgentLookup {
  /** Enabled agents bound to `repo` (case-insensitive) that list `event`; [] when none. */
  matches(repo: string, event: string): readonly FanOutMatch[];
}

/** The issue or pull request a delivery is about. */
export interface GitHubTarget {
  /** `repository.full_name` as GitHub sent it. */
  repo: string;
  number: number;
}

type Json = Readonly<Record<string, unknown>>;

function objectAt(value: unknown, key: string): Json {
  if (value === null || typeof value !== 'object') return {};
  const child = (value as Json)[key];
  return child !== null && typeof child === 'object' && !Array.isArray(child) ? (child as Json) : {};
}

function stringAt(value: Json, key: string): string | undefined {
  const raw = value[key];
  return typeof raw === 'string' ? raw : undefined;
}

function asJson(payload: unknown): Json {
  return payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Json) : {};
}

/**
 * The `(repo, number)` a delivery is about (reference §7.3 step 1): `pull_request.number` (or the
 * top-level `number`) for `pull_request`; `pull_request.number` for reviews and review comments;
 * `issue.number` for `issues` and `issue_comment`. `undefined` for other events (`ping`) and for
 * payloads without a repo name or an integer number.
 */
export function targetOf(event: string, payload: unknown): GitHubTarget | undefined {
  const json = asJson(payload);
  const repo = stringAt(objectAt(json, 'repository'), 'full_name');
  if (repo === undefined) return undefined;
  let number: unknown;
  switch (event) {
    case 'pull_request':
      // `||` as the reference's Python `or`: a missing (or 0) PR number falls back to the top level.
      number = objectAt(json, 'pull_request').number || json.number;
      break;
    case 'pull_request_review':
    case 'pull_request_review_comment':
      number = objectAt(json, 'pull_request').number;
      break;
    case 'issues':
    case 'issue_comment':
      number = objectAt(json, 'issue').number;
      break;
    default:
      return undefined;
  }
  return typeof number === 'number' && Number.isInteger(number) ? { repo, number } : undefined;
}

/**
 * True when `senderLogin` is the agent itself, so its own comments never wake it again
 * (reference §7.3 self-event gate). The sender minus a trailing `[bot]` is compared
 * case-insensitively with `bot_login` and every `mention_login` of every binding; the agent's
 * name counts only when none of those is set, so a person whose login equals an agent's folder
 * name is not ignored. Other bots (`copilot[bot]`, CodeRabbit) are not self.
 */
export function isSelfEvent(
  agent: Pick<FanOutAgent, 'name'> & { github: Pick<GitHubAgentConfig, 'bot_login'> },
  senderLogin: string | undefined,
  bindings: readonly GitHubBinding[],
): boolean {
  if (senderLogin === undefined) return false;
  const sender = (senderLogin.endsWith('[bot]') ? senderLogin.slice(0, -'[bot]'.length) : senderLogin).toLowerCase();
  const selfLogins = new Set<string>();
  if (agent.github.bot_login !== undefined) selfLogins.add(agent.github.bot_login.toLowerCase());
  for (const binding of bindings) {
    for (const trigger of Object.values(binding.triggers)) {
      if (trigger?.mention_login !== undefined) selfLogins.add(trigger.mention_login.toLowerCase());
    }
  }
  if (selfLogins.size === 0) selfLogins.add(agent.name.toLowerCase());
  return selfLogins.has(sender);
}

/**
 * The login `require_mention` looks for (reference §7.3): the trigger's `mention_login`, else the
 * agent's `bot_login`, else the operator's `channels.github.default_mention_login` (trimmed;
 * blank = unset), else the agent's name.
 */
export function mentionLoginFor(
  trigger: Pick<GitHubTrigger, 'mentionLogin'>,
  agent: Pick<FanOutAgent, 'name'> & { github: Pick<GitHubAgentConfig, 'bot_login'> },
  defaultMentionLogin: string | undefined,
): string {
  const operatorDefault = defaultMentionLogin?.trim() || undefined;
  return trigger.mentionLogin ?? agent.github.bot_login ?? operatorDefault ?? agent.name;
}

/** Whether a trigger fires, and the reason the fan-out summary shows. */
export type TriggerVerdict = { fire: true; reason: string } | { fire: false; reason: string };

/** The text a mention is looked for in: the comment, issue, PR or review body. */
function mentionText(event: string, payload: Json): string {
  const body = (key: string): string => stringAt(objectAt(payload, key), 'body') ?? '';
  switch (event) {
    case 'issue_comment':
    case 'pull_request_review_comment':
      return body('comment');
    case 'issues':
      return body('issue');
    case 'pull_request':
      return body('pull_request');
    case 'pull_request_review':
      return body('review');
    default:
      return '';
  }
}

/**
 * The login of whoever wrote what the event is about (comment, PR, review or issue author); the
 * sender for other events. `allow_authors` and the write-access check apply to this login.
 */
export function authorOf(event: string, payload: unknown): string | undefined {
  const json = asJson(payload);
  const userOf = (key: string): string | undefined => stringAt(objectAt(objectAt(json, key), 'user'), 'login');
  switch (event) {
    case 'issue_comment':
    case 'pull_request_review_comment':
      return userOf('comment');
    case 'pull_request':
      return userOf('pull_request');
    case 'pull_request_review':
      return userOf('review');
    case 'issues':
      return userOf('issue');
    default:
      return stringAt(objectAt(json, 'sender'), 'login');
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * True when `text` @-mentions `login`. Logins are `[A-Za-z0-9-]`, so the character after the
 * login must not be one (`@deerflow` ≠ `@deerflow-bot`) and neither may the one before the `@`
 * (`a@deerflow.com` is an e-mail address). Case-insensitive, as GitHub is.
 */
export function mentions(text: string, login: string): boolean {
  return new RegExp(`(?:^|[^A-Za-z0-9-])@${escapeRegExp(login)}(?![A-Za-z0-9-])`, 'i').test(text);
}

/** Python's `repr` of a string, so reasons read exactly as the reference's (`'opened'`). */
function pyRepr(value: string | undefined): string {
  if (value === undefined) return 'None';
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  const escaped = value.replace(/\\/g, '\\\\').replace(new RegExp(quote, 'g'), `\\${quote}`);
  return `${quote}${escaped}${quote}`;
}

/**
 * Applies one resolved trigger to a delivery (reference §7.3, `event_should_fire`), in order:
 * the action whitelist (`action='x' not in ['opened']`); `allow_authors`, which fires for a listed
 * author without a mention (`allow_authors:<login>`); `require_mention` with the trigger's
 * `mention_login` or `mentionLogin` (`mention required for @<login>`). A fired verdict's reason is
 * `action=<action>`, or `ok` for events without an action.
 */
export function triggerVerdict(
  event: string,
  payload: unknown,
  trigger: GitHubTrigger,
  mentionLogin: string,
): TriggerVerdict {
  const json = asJson(payload);
  const action = stringAt(json, 'action');
  if (trigger.actions !== null && (action === undefined || !trigger.actions.includes(action))) {
    return { fire: false, reason: `action=${pyRepr(action)} not in [${trigger.actions.map(pyRepr).join(', ')}]` };
  }
  if (trigger.allowAuthors.length > 0) {
    const author = authorOf(event, json);
    const allowed = new Set(trigger.allowAuthors.map((login) => login.toLowerCase()));
    if (author && allowed.has(author.toLowerCase())) return { fire: true, reason: `allow_authors:${author}` };
  }
  if (trigger.requireMention) {
    const login = trigger.mentionLogin ?? mentionLogin;
    if (!login || !mentions(mentionText(event, json), login)) {
      return { fire: false, reason: `mention required for @${login}` };
    }
  }
  return { fire: true, reason: action ? `action=${action}` : 'ok' };
}

/**
 * True when a `pull_request_review_comment` has the shape of a review's inline-comment fan-out:
 * it belongs to a review (`pull_request_review_id`) and is not a reply in a thread
 * (`in_reply_to_id`). Not by itself a reason to drop it; see {@link isCoveredByReviewTrigger}.
 */
export function isReviewCompanionComment(event: string, payload: unknown): boolean {
  if (event !== 'pull_request_review_comment') return false;
  const comment = objectAt(payload, 'comment');
  return comment.pull_request_review_id != null && comment.in_reply_to_id == null;
}

/**
 * The redundant review-comment gate (reference §7.3): a companion comment is dropped for a
 * binding only when the same binding also listens to `pull_request_review` on this repo without
 * `require_mention` — then it gets the review itself and fetches the inline comments from there.
 * A review trigger that needs a mention is no guarantee (the mention may sit only in one inline
 * comment), and a binding without a review trigger would lose the content entirely.
 */
export function isCoveredByReviewTrigger(reviewTrigger: GitHubTrigger | undefined): boolean {
  return reviewTrigger !== undefined && !reviewTrigger.requireMention;
}

/**
 * What the agent acknowledges with 👀: the comment that woke it (issue or review comment), else the
 * issue or pull request (reviews cannot carry reactions, so a review marks its PR).
 */
export function reactionTargetOf(event: string, payload: unknown, target: GitHubTarget): ReactionTarget {
  const commentId = objectAt(payload, 'comment').id;
  if (typeof commentId === 'number' && Number.isSafeInteger(commentId)) {
    if (event === 'issue_comment') return { kind: 'issue_comment', id: commentId };
    if (event === 'pull_request_review_comment') return { kind: 'review_comment', id: commentId };
  }
  return { kind: 'issue', number: target.number };
}

const GITHUB_THREAD_NAMESPACE = 'a3f4b2c1-7e8d-4f6a-b9c0-1234567890ab';

/**
 * The agent thread for one issue or PR and one agent (reference §7.3 step 4):
 * uuid5(`a3f4b2c1-7e8d-4f6a-b9c0-1234567890ab`, `"<repo>#<number>:<agent>"`). Stable across
 * restarts and replicas; two agents on one PR get two threads.
 *
 * @throws RangeError when `repo` has no `/`, `number` is not an integer or `agentName` is blank.
 */
export function githubThreadId(repo: string, number: number, agentName: string): string {
  if (!repo.includes('/')) throw new RangeError('repo must be owner/name');
  if (!Number.isInteger(number)) throw new RangeError('number must be an integer');
  if (agentName.trim() === '') throw new RangeError('agent name must not be blank');
  return uuidv5(`${repo}#${number}:${agentName}`, GITHUB_THREAD_NAMESPACE);
}

/** What the manager needs to run one agent on one delivery. */
export interface FanOutMessage {
  agent: string;
  /** The agent's `owner` as written in config.yaml; the run executes as that account. */
  ownerUserId?: string;
  /** {@link githubThreadId}: the thread to create on first use, reused afterwards. */
  threadId: string;
  /** The trigger's reason for firing (`action=opened`, `allow_authors:octocat`, `ok`). */
  reason: string;
  /** The `metadata.github` of reference §1.5, for the run's context and the log-only egress. */
  github: {
    repo: string;
    number: number;
    event: string;
    deliveryId?: string;
    installationId?: number;
    /** The agent's `token_permissions`, when it set them. */
    tokenPermissions?: Record<string, TokenPermissionLevel>;
    recursionLimit?: number;
  };
  /**
   * Set when the agent may only act for authors with write access to the repo (its
   * `trusted_authors` is not `any` and the trigger did not fire through `allow_authors`): the
   * caller must check `login`'s permission before publishing and drop the message otherwise.
   */
  needsWriteAccessCheck?: { login: string };
  /** What gets 👀 when the run starts: the comment, or the issue / PR itself. */
  reaction?: ReactionTarget;
  inbound: Omit<InboundMessage, 'replyTo' | 'receivedAt'>;
}

export interface FanOutSkip {
  agent?: string;
  reason: string;
}

/** The route's `dispatch` body (reference §7.1). */
export interface FanOutSummary {
  matched_agents: string[];
  fired_agents: string[];
  skipped: FanOutSkip[];
}

export interface FanOutInput {
  /** `X-GitHub-Event`. */
  event: string;
  /** `X-GitHub-Delivery`; absent = messages carry no `messageId` and cannot be deduplicated. */
  deliveryId?: string | undefined;
  payload: unknown;
  /** Refresh it (`reloadIfChanged`) before calling; the fan-out only reads it. */
  registry: GitHubAgentLookup;
  /** `channels.github.default_mention_login`; blank = unset. */
  defaultMentionLogin?: string | undefined;
}

export interface FanOutResult {
  messages: FanOutMessage[];
  summary: FanOutSummary;
}

function matchKey(agent: FanOutAgent): string {
  return `${agent.owner ?? ''}\n${agent.name}`;
}

/**
 * Decides which bound agents act on a delivery and builds their messages (reference §7.3): per
 * match, in registry order, the self-event gate (`self_event`), the trigger verdict, and the
 * redundant review-comment gate (`redundant_review_comment`, or the binding's own failing reason).
 * A delivery without an issue or PR gets `skipped: [{ reason: 'no_target' }]`.
 */
export function fanOut(input: FanOutInput): FanOutResult {
  const { event, payload, registry } = input;
  const target = targetOf(event, payload);
  if (target === undefined) {
    return { messages: [], summary: { matched_agents: [], fired_agents: [], skipped: [{ reason: 'no_target' }] } };
  }
  const matches = registry.matches(target.repo, event);
  const summary: FanOutSummary = { matched_agents: matches.map((m) => m.agent.name), fired_agents: [], skipped: [] };
  const messages: FanOutMessage[] = [];
  if (matches.length === 0) return { messages, summary };

  const senderLogin = stringAt(objectAt(payload, 'sender'), 'login');
  const reviewTriggers = new Map<string, GitHubTrigger>();
  if (isReviewCompanionComment(event, payload)) {
    for (const m of registry.matches(target.repo, 'pull_request_review')) reviewTriggers.set(matchKey(m.agent), m.trigger);
  }
  let prompt: string | undefined;

  for (const { agent, trigger } of matches) {
    if (isSelfEvent(agent, senderLogin, agent.github.bindings)) {
      summary.skipped.push({ agent: agent.name, reason: 'self_event' });
      continue;
    }
    const verdict = triggerVerdict(event, payload, trigger, mentionLoginFor(trigger, agent, input.defaultMentionLogin));
    if (reviewTriggers.size > 0 && isCoveredByReviewTrigger(reviewTriggers.get(matchKey(agent)))) {
      summary.skipped.push({ agent: agent.name, reason: verdict.fire ? 'redundant_review_comment' : verdict.reason });
      continue;
    }
    if (!verdict.fire) {
      summary.skipped.push({ agent: agent.name, reason: verdict.reason });
      continue;
    }
    const trustedByTrigger = verdict.reason.startsWith('allow_authors:');
    const author = authorOf(event, payload) ?? senderLogin;
    const needsCheck = agent.github.trusted_authors !== 'any' && !trustedByTrigger;
    if (needsCheck && !author) {
      // Nobody to check write access for: refuse rather than run on text from an unknown author.
      summary.skipped.push({ agent: agent.name, reason: 'unknown_author' });
      continue;
    }
    prompt ??= buildPrompt(event, payload);
    messages.push(
      buildMessage({ input, target, agent, prompt, senderLogin, reason: verdict.reason, checkLogin: needsCheck ? author : undefined }),
    );
    summary.fired_agents.push(agent.name);
  }
  return { messages, summary };
}

interface MessageParts {
  input: FanOutInput;
  target: GitHubTarget;
  agent: FanOutAgent;
  prompt: string;
  senderLogin: string | undefined;
  reason: string;
  checkLogin: string | undefined;
}

function buildMessage(parts: MessageParts): FanOutMessage {
  const { input, target, agent } = parts;
  const { deliveryId } = input;
  const hasDelivery = deliveryId !== undefined && deliveryId !== '';
  const message: FanOutMessage = {
    agent: agent.name,
    threadId: githubThreadId(target.repo, target.number, agent.name),
    reason: parts.reason,
    github: { repo: target.repo, number: target.number, event: input.event },
    reaction: reactionTargetOf(input.event, input.payload, target),
    inbound: {
      channel: 'github',
      chatId: target.repo,
      topicId: `${target.number}:${agent.name}`,
      userId: parts.senderLogin || 'github',
      workspaceId: target.repo,
      text: parts.prompt,
      kind: 'chat',
      isPrivateChat: false,
    },
  };
  if (agent.owner !== undefined) message.ownerUserId = agent.owner;
  // One delivery fans out to several agents (possibly of several owners): the id is scoped to
  // both, so a redelivery is deduplicated per agent while the agents stay distinct.
  if (hasDelivery) {
    message.inbound.messageId = `${deliveryId}:${agent.owner ?? ''}:${agent.name}`;
    message.github.deliveryId = deliveryId;
  }
  if (agent.github.installation_id !== undefined) message.github.installationId = agent.github.installation_id;
  if (agent.github.recursion_limit !== undefined) message.github.recursionLimit = agent.github.recursion_limit;
  if (agent.github.token_permissions !== undefined) message.github.tokenPermissions = { ...agent.github.token_permissions };
  if (parts.checkLogin !== undefined) message.needsWriteAccessCheck = { login: parts.checkLogin };
  return message;
}
