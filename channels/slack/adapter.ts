import { webApi } from '@slack/bolt';
import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { ConfigError } from '../../src/errors.js';
import { SlackApi } from './api.js';
import { type SlackConfig, slackModeOf } from './config.js';
import { createSlackEgress } from './egress.js';
import { createSlackFiles } from './files.js';
import { SlackIngress } from './ingress.js';
import { SLACK_LIMITS } from './limits.js';
import { NativeStreaming } from './native-reply.js';
import { createSlackRoutes } from './webhook/routes.js';

/** What core needs to know about Slack, as data. */
export const SLACK_CAPABILITIES: ChannelCapabilities = {
  // Replies stream natively (in channels addressed to the person who asked) while the workspace
  // allows it; after a refusal they edit the placeholder.
  streaming: 'native',
  maxMessageChars: SLACK_LIMITS.maxMessageChars,
  hasThreads: true,
  files: { maxInboundBytes: SLACK_LIMITS.maxDownloadBytes, maxOutboundBytes: SLACK_LIMITS.maxUploadBytes },
  // Which channel messages arrive is the app's event subscriptions: `app_mention` only, or `message.channels` too.
  groupTrigger: 'configurable',
  runMode: 'stream',
};

/**
 * Retries of one Web API call on 5xx and network errors, inside the SDK: 3 tries within ~3 s
 * (the SDK's default is ten retries over about thirty minutes). 429s are not retried by the SDK
 * (`rejectRateLimitedCalls`): the shared gate owns them, so every sender sees the wait.
 */
const RETRY_CONFIG = { retries: 2, factor: 2, minTimeout: 250, maxTimeout: 1000, randomize: false } as const;

/**
 * The Slack adapter: Socket Mode (or HTTP events at `/api/webhooks/slack`) in, threaded replies
 * out, files both ways.
 *
 * @throws ConfigError when `bot_token` or the transport's token is missing.
 */
export function createSlackChannel(config: SlackConfig, deps: ChannelDeps): ChannelAdapter {
  const mode = slackModeOf(config);
  const missing = [
    ...(config.bot_token === undefined ? ['channels.slack.bot_token: required when the Slack channel is enabled'] : []),
    ...(mode === 'socket' && config.app_token === undefined ? ['channels.slack.app_token: required for Socket Mode'] : []),
    ...(mode === 'http' && config.signing_secret === undefined ? ['channels.slack.signing_secret: required for HTTP events'] : []),
  ];
  if (missing.length > 0) throw new ConfigError(missing);
  const botToken = config.bot_token as string;
  const logger = deps.logger.child({ channel: 'slack' });
  const clientOptions: webApi.WebClientOptions = { slackApiUrl: config.api_url, retryConfig: RETRY_CONFIG, rejectRateLimitedCalls: true };
  const api = new SlackApi(new webApi.WebClient(botToken, { ...clientOptions, logLevel: webApi.LogLevel.ERROR }));
  const gate = deps.rateGate('workspace');
  const ingress = new SlackIngress({
    api,
    deps: { ...deps, logger },
    gate,
    allowedUsers: config.allowed_users,
    botToken,
    transport: mode === 'socket' ? { mode, appToken: config.app_token as string } : { mode },
    clientOptions,
  });
  return {
    name: 'slack',
    displayName: 'Slack',
    capabilities: SLACK_CAPABILITIES,
    egress: createSlackEgress({
      api,
      gate,
      updateBudget: deps.intervalBudget('chat.update', SLACK_LIMITS.workspaceUpdateIntervalMs),
      appendBudget: deps.intervalBudget('chat.appendStream', SLACK_LIMITS.streamAppendIntervalMs),
      native: new NativeStreaming(config.native_streaming),
      logger,
      now: deps.now,
    }),
    files: createSlackFiles({ api, botToken, apiUrl: config.api_url, gate, logger }),
    start: () => ingress.start(),
    stop: () => ingress.stop(),
    status: () => ingress.status(),
    ...(mode === 'http'
      ? { routes: createSlackRoutes({ signingSecret: config.signing_secret as string, now: deps.now, dispatch: (body, retry) => ingress.dispatch(body, retry) }) }
      : {}),
  };
}
