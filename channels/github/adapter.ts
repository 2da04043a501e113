import type {
  ChannelAdapter,
  ChannelCapabilities,
  ChannelDeps,
  ChannelEgress,
  ChannelRunHooks,
  ChannelStatus,
  InboundMessage,
} from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { GitHubAgentRegistry } from './agents.js';
import type { GitHubConfig } from './config.js';
import { createGitHubDispatch, githubDataOf } from './dispatch.js';
import { ghEnvironment } from './gh-environment.js';
import { addEyesReaction } from './reactions.js';
import { InstallationTokens, REACTION_TOKEN_PERMISSIONS, RUN_TOKEN_PERMISSIONS, type TokenScope } from './tokens.js';
import { githubWebhookRoutes } from './webhook.js';

/** "Maximum is 65536 characters" for an issue or pull request comment body. */
const GITHUB_COMMENT_MAX_CHARS = 65_536;
/** Reference §4.6: GitHub runs get at least 250 graph steps; an agent may set its own. */
const GITHUB_RECURSION_LIMIT = 250;

/**
 * What core needs to know about GitHub, as data (reference §4.6 `github` policy): events, not
 * people, so no identity gate and nobody to ask; runs go on in the background and answer with
 * `gh`; a busy thread keeps its follow-ups.
 */
export const GITHUB_CAPABILITIES: ChannelCapabilities = {
  streaming: 'none',
  maxMessageChars: GITHUB_COMMENT_MAX_CHARS,
  hasThreads: true,
  files: { maxInboundBytes: 0, maxOutboundBytes: 0 },
  groupTrigger: 'mention',
  runMode: 'fire_and_forget',
  requiresBoundIdentity: false,
  interactive: false,
  defaultRecursionLimit: GITHUB_RECURSION_LIMIT,
  buffersFollowUps: true,
};

/**
 * The GitHub adapter: `POST /api/webhooks/github` in (verified, deduplicated, fanned out to the
 * agents bound to the repo), nothing out: agents post with `gh` from their sandbox, using the
 * installation token the run hooks hand it. With `enabled: false` but a secret set, the route
 * stays up and acknowledges deliveries without running anything (the kill switch).
 *
 * @throws ConfigError when the App's private key cannot be read.
 */
export function createGitHubChannel(config: GitHubConfig, deps: ChannelDeps): ChannelAdapter {
  const logger = deps.logger.child({ channel: 'github' });
  const tokens = InstallationTokens.fromConfig(config, logger);
  let registry: GitHubAgentRegistry | undefined;
  let failure: string | undefined;
  const dispatch = createGitHubDispatch({
    registry: {
      matches: (repo, event) => registry?.matches(repo, event) ?? [],
      reloadIfChanged: async () => (registry ? registry.reloadIfChanged() : false),
    },
    intake: deps.intake,
    tokens,
    apiUrl: config.api_url,
    defaultMentionLogin: config.default_mention_login,
    findUserId: deps.findUserId,
    logger,
    now: deps.now,
  });
  return {
    name: 'github',
    displayName: 'GitHub',
    capabilities: GITHUB_CAPABILITIES,
    egress: logOnlyEgress(logger),
    runHooks: runHooks(config, tokens, logger),
    routes: githubWebhookRoutes({ config, deliveries: deps.deliveries, dispatch, isEnabled: () => config.enabled, logger }),
    async start() {
      if (!config.enabled) {
        logger.warn('channels.github.enabled is false: webhook deliveries are acknowledged and skipped');
        return;
      }
      if (config.webhook_secret === undefined && !config.allow_unverified) {
        logger.warn('channels.github.webhook_secret is not set: POST /api/webhooks/github answers 503 until it is');
      }
      if (tokens === undefined) logger.warn('no GitHub App configured (app_id + private_key): agents get no token and write access cannot be checked');
      try {
        registry = await GitHubAgentRegistry.load({ agentsDir: deps.agentsDir, logger, now: deps.now });
        failure = undefined;
      } catch (error) {
        failure = 'the agents folder cannot be read';
        throw new ChannelError('github', 'CHANNEL_UNAVAILABLE', failure, { cause: error });
      }
    },
    async stop() {},
    status(): ChannelStatus {
      if (!config.enabled) return { running: false, reason: 'disabled (channels.github.enabled: false); deliveries are acknowledged and skipped' };
      return failure ? { running: false, reason: failure } : { running: registry !== undefined };
    },
  };
}

/**
 * Reference §7.5: the agent's final message is not posted anywhere (the agent already said what
 * it had to with `gh`); its length is logged, never its text.
 */
function logOnlyEgress(logger: Logger): ChannelEgress {
  return {
    reply(target) {
      return {
        update() {},
        async finish(text) {
          const [number] = (target.topicId ?? '').split(':');
          logger.info({ repo: target.chatId, number, textLength: text.length }, 'final message from agent; not posted (GitHub agents post with gh)');
        },
      };
    },
  };
}

/**
 * The installation token (and Enterprise host) for each run's `gh`, and 👀 on what woke the agent.
 * Each token is minted for the event's one repository: the run's with the agent's permissions
 * (`token_permissions`, else {@link RUN_TOKEN_PERMISSIONS}), the reaction's with only what a
 * reaction needs. The run's token goes to that run's sandbox secrets and nowhere else (not
 * the server's own environment, not a log line, not another run's environment).
 */
function runHooks(config: GitHubConfig, tokens: InstallationTokens | undefined, logger: Logger): ChannelRunHooks {
  const tokenFor = async (message: InboundMessage, permissions: TokenScope['permissions'] | undefined): Promise<string | undefined> => {
    const data = githubDataOf(message);
    if (data?.installationId === undefined) return undefined;
    return tokens?.token(data.installationId, { repo: data.repo, permissions: permissions ?? data.tokenPermissions ?? RUN_TOKEN_PERMISSIONS });
  };
  return {
    async sandboxEnvironment(message) {
      return ghEnvironment(config.api_url, await tokenFor(message, undefined));
    },
    runStarted(messages) {
      for (const message of messages) {
        const data = githubDataOf(message);
        if (data?.reaction === undefined) continue;
        const target = data.reaction;
        void tokenFor(message, REACTION_TOKEN_PERMISSIONS).then((token) =>
          token === undefined ? false : addEyesReaction({ token, apiUrl: config.api_url, repo: data.repo, target, logger }),
        );
      }
    },
  };
}
