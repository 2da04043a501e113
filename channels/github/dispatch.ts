import { isDuplicateDelivery } from '../../src/channel/journaled-intake.js';
import type { InboundIntake, InboundMessage, InboundReservation, JsonValue } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { DEFAULT_USER_ID } from '../../src/runtime/types.js';
import { type FanOutMessage, type GitHubAgentLookup, fanOut } from './fanout.js';
import { hasWriteAccess } from './permissions.js';
import type { ReactionTarget } from './reactions.js';
import { type InstallationTokens, PERMISSION_CHECK_TOKEN_PERMISSIONS, type TokenPermissionLevel } from './tokens.js';
import type { DispatchSummary, GitHubDispatch } from './webhook.js';

/**
 * What the GitHub adapter keeps on each message it publishes (`InboundMessage.platformData`), for
 * its own run hooks: the token's installation and what to put 👀 on.
 */
export interface GitHubMessageData {
  repo: string;
  number: number;
  event: string;
  deliveryId?: string;
  installationId?: number;
  /** The agent's `token_permissions`; absent = `RUN_TOKEN_PERMISSIONS`. */
  tokenPermissions?: Record<string, TokenPermissionLevel>;
  reaction?: ReactionTarget;
}

/** Reads back what {@link publishable} stored; undefined for anything else. */
export function githubDataOf(message: InboundMessage): GitHubMessageData | undefined {
  const data = message.platformData;
  if (data === undefined || typeof data.repo !== 'string' || typeof data.number !== 'number') return undefined;
  return data as unknown as GitHubMessageData;
}

/**
 * A write-access check could not be made (the token mint or the permission call failed: GitHub
 * unreachable, rate limited): the agent does not run (fail closed), and the delivery is answered
 * 503 so it can be redelivered once GitHub is back. Agents already published are deduplicated by
 * message id on redelivery.
 */
export class WriteAccessUnverifiedError extends ChannelError {
  constructor(deliveryId: string | undefined) {
    super('github', 'CHANNEL_UNAVAILABLE', `write access could not be checked for delivery ${deliveryId ?? ''}`, { status: 503 });
    this.name = 'WriteAccessUnverifiedError';
  }
}

/** How long a write-access answer is reused: GitHub allows an installation 5,000 requests an hour. */
export const WRITE_ACCESS_TTL_MS = 60_000;
/** Answers kept at most; the oldest go first. */
const WRITE_ACCESS_CACHE_MAX = 1000;

/**
 * Write-access answers per (repo, login), reused for {@link WRITE_ACCESS_TTL_MS} so a busy
 * discussion costs one permission call a minute, not one per comment. Concurrent checks of one
 * pair share a request; failures are never kept.
 */
class WriteAccessCache {
  private readonly answers = new Map<string, { canWrite: boolean; expiresAtMs: number }>();
  private readonly pending = new Map<string, Promise<boolean>>();

  constructor(private readonly now: () => number) {}

  async check(repo: string, login: string, ask: () => Promise<boolean>): Promise<boolean> {
    const key = `${repo.toLowerCase()}\n${login.toLowerCase()}`;
    const cached = this.answers.get(key);
    if (cached && cached.expiresAtMs > this.now()) return cached.canWrite;
    let asking = this.pending.get(key);
    if (!asking) {
      asking = ask()
        .then((canWrite) => {
          this.answers.delete(key);
          this.answers.set(key, { canWrite, expiresAtMs: this.now() + WRITE_ACCESS_TTL_MS });
          if (this.answers.size > WRITE_ACCESS_CACHE_MAX) this.answers.delete(this.answers.keys().next().value as string);
          return canWrite;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, asking);
    }
    return asking;
  }
}

export interface GitHubDispatchDeps {
  registry: GitHubAgentLookup & { reloadIfChanged(): Promise<boolean> };
  intake: InboundIntake;
  /** Absent when no GitHub App is configured: no tokens, so no write-access checks can pass. */
  tokens: Pick<InstallationTokens, 'token'> | undefined;
  apiUrl: string;
  defaultMentionLogin: string | undefined;
  findUserId(idOrName: string): Promise<string | undefined>;
  logger: Logger;
  now: () => number;
}

/** Why an agent the trigger fired for still does not run. */
type Refusal = { agent: string; reason: string; unverified?: true };

/**
 * The fan-out behind `POST /api/webhooks/github` (reference §7.3): refresh the registry, decide
 * which agents fire, run as each agent's owner, check the author's write access where the agent
 * asks for it, and publish one message per agent, all or none (a full queue answers 503 and the
 * delivery can be redelivered). Never does model work.
 */
export function createGitHubDispatch(deps: GitHubDispatchDeps): GitHubDispatch {
  const writeAccess = new WriteAccessCache(deps.now);
  return async (event, deliveryId, payload) => {
    await deps.registry.reloadIfChanged();
    const { messages, summary } = fanOut({
      event,
      deliveryId,
      payload,
      registry: deps.registry,
      defaultMentionLogin: deps.defaultMentionLogin,
    });
    const checked = await Promise.all(messages.map((message) => admit(message, deps, writeAccess, event)));
    const accepted = checked.filter((result): result is InboundMessage => !('reason' in result));
    const refused = checked.filter((result): result is Refusal => 'reason' in result);
    await publishAll(deps.intake, accepted);
    const fired = new Set(accepted.map((message) => message.agentName));
    const result: DispatchSummary = {
      matched_agents: summary.matched_agents,
      fired_agents: summary.fired_agents.filter((agent) => fired.has(agent)),
      skipped: [...summary.skipped, ...refused.map(({ agent, reason }) => ({ agent, reason }))],
    };
    if (refused.some((refusal) => refusal.unverified)) {
      throw new WriteAccessUnverifiedError(deliveryId);
    }
    return result;
  };
}

/** The message to publish for one fired agent, or why it must not run. */
async function admit(
  message: FanOutMessage,
  deps: GitHubDispatchDeps,
  writeAccess: WriteAccessCache,
  event: string,
): Promise<InboundMessage | Refusal> {
  const log = { agent: message.agent, repo: message.github.repo, number: message.github.number, delivery: message.github.deliveryId };
  const ownerUserId = message.ownerUserId === undefined ? DEFAULT_USER_ID : await deps.findUserId(message.ownerUserId);
  if (ownerUserId === undefined) {
    deps.logger.warn(log, 'GitHub agent not run: its owner is not an account on this server');
    return { agent: message.agent, reason: 'unknown_owner' };
  }
  const check = message.needsWriteAccessCheck;
  if (check !== undefined) {
    const refusal = await checkWriteAccess(message, check.login, deps, writeAccess, log);
    if (refusal) return refusal;
  }
  return publishable(message, ownerUserId, event, deps.now());
}

async function checkWriteAccess(
  message: FanOutMessage,
  login: string,
  deps: GitHubDispatchDeps,
  writeAccess: WriteAccessCache,
  log: Record<string, unknown>,
): Promise<Refusal | undefined> {
  const { installationId } = message.github;
  if (installationId === undefined || deps.tokens === undefined) {
    // A setup gap, not an outage: a redelivery would not help, so the delivery is not failed.
    deps.logger.warn(
      log,
      'GitHub agent not run: the author\'s write access cannot be checked without an installation token (set the agent\'s installation_id and channels.github app_id + private_key, or trusted_authors: any)',
    );
    return { agent: message.agent, reason: 'write_access_unverifiable' };
  }
  // Scoped to the one repo and to reading metadata: this token decides, it never writes.
  const token = await deps.tokens.token(installationId, { repo: message.github.repo, permissions: PERMISSION_CHECK_TOKEN_PERMISSIONS });
  if (token === undefined) {
    // The mint failed (and logged why): as unanswerable as a failed permission call.
    return { agent: message.agent, reason: 'write_access_check_failed', unverified: true };
  }
  try {
    const { repo } = message.github;
    if (await writeAccess.check(repo, login, () => hasWriteAccess({ token, apiUrl: deps.apiUrl, repo, login }))) return undefined;
    deps.logger.info({ ...log, login }, 'GitHub agent not run: the author has no write access');
    return { agent: message.agent, reason: `no_write_access:${login}` };
  } catch (error) {
    deps.logger.warn({ ...log, login, err: describeError(error) }, 'GitHub agent not run: write access could not be checked');
    return { agent: message.agent, reason: 'write_access_check_failed', unverified: true };
  }
}

function publishable(message: FanOutMessage, ownerUserId: string, event: string, receivedAt: number): InboundMessage {
  const { github } = message;
  const data: GitHubMessageData = { repo: github.repo, number: github.number, event };
  if (github.deliveryId !== undefined) data.deliveryId = github.deliveryId;
  if (github.installationId !== undefined) data.installationId = github.installationId;
  if (github.tokenPermissions !== undefined) data.tokenPermissions = { ...github.tokenPermissions };
  const reaction = message.reaction;
  if (reaction !== undefined) data.reaction = reaction;
  return {
    ...message.inbound,
    receivedAt,
    replyTo: {},
    ownerUserId,
    preferredThreadId: message.threadId,
    agentName: message.agent,
    // The trigger and the write-access check vouched for the author: the agent may use its shell.
    senderIsAllowlisted: true,
    ...(github.recursionLimit === undefined ? {} : { recursionLimit: github.recursionLimit }),
    platformData: data as unknown as Record<string, JsonValue>,
  };
}

/** Reserves a slot for every message before committing any, so a full queue publishes none of them. */
async function publishAll(intake: InboundIntake, messages: InboundMessage[]): Promise<void> {
  const reserved: Array<{ message: InboundMessage; reservation: InboundReservation }> = [];
  try {
    for (const message of messages) reserved.push({ message, reservation: await intake.reserve() });
  } catch (error) {
    for (const { reservation } of reserved) reservation.release();
    throw error;
  }
  for (const [index, { message, reservation }] of reserved.entries()) {
    try {
      await reservation.commit(message);
    } catch (error) {
      // An agent's message accepted before (a redelivery that got past the delivery record): it ran already.
      if (isDuplicateDelivery(error)) continue;
      for (const rest of reserved.slice(index + 1)) rest.reservation.release();
      throw error;
    }
  }
}
