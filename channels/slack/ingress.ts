import { App, type Receiver, SocketModeReceiver, type webApi } from '@slack/bolt';
import { type AdmissionRules, admissionRules, type PendingInbound } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelDeps, ChannelStatus } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { within } from '../../src/time.js';
import type { SlackApi } from './api.js';
import { boltLogger, noopReceiver } from './bolt.js';
import { WORKSPACE_KEY } from './budget.js';
import { type DecideContext, decideEvent } from './decide.js';
import { SLACK_REACTIONS } from './egress.js';
import { notRunningReason, toChannelError } from './errors.js';
import { slackEventCallbackSchema, slackMessageEventSchema } from './events.js';
import { unlabelledChannels, unlabelledMentions } from './inbound-text.js';
import { SLACK_LIMITS } from './limits.js';
import { SlackNameCache } from './name-cache.js';
import { mrkdwnText } from './render.js';

/** Everything this adapter says to users by itself (reference §6.1). */
export const SLACK_REPLIES = { working: 'Working on it...' } as const;

export interface SlackIngressOptions {
  api: SlackApi;
  deps: ChannelDeps;
  /** Shared with egress: no placeholder goes out while Slack asked the workspace to wait. */
  gate: RateGate;
  allowedUsers: readonly string[];
  botToken: string;
  /** Socket Mode with this app token, or HTTP events handed over by the webhook route. */
  transport: { mode: 'socket'; appToken: string } | { mode: 'http' };
  clientOptions: webApi.WebClientOptions;
  /** How long `start()` waits for auth.test and the socket's `hello`; default 30000 ms. */
  startTimeoutMs?: number;
  /** How long `stop()` lets acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/** How an HTTP event was taken: handed to Bolt, left for Slack to send again (the intake is full), or not (stopped). */
export type SlackDispatch = 'taken' | 'refused' | 'stopped';

/**
 * The transport: Bolt takes events (Socket Mode or HTTP) and acknowledges every envelope before
 * our listener runs, so the listener only decides (`decide.ts`) and hands the message to core's
 * pipeline, each channel's in order. A message event that finds the intake full before its last
 * retry is not acknowledged (HTTP 503, no envelope ack), so Slack sends it again; Slack does not
 * send an acknowledged event again, so a message the intake refuses after that is answered with
 * the busy notice.
 */
export class SlackIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  private app: App | undefined;
  private identity: { teamId: string; botUserId: string; botName: string | undefined } | undefined;
  private readonly rules: AdmissionRules;
  private readonly logger: Logger;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;
  private readonly userNames: SlackNameCache;
  private readonly channelNames: SlackNameCache;

  constructor(private readonly options: SlackIngressOptions) {
    this.userNames = new SlackNameCache({ lookup: (userId) => options.api.userName(userId), now: options.deps.now });
    this.channelNames = new SlackNameCache({ lookup: (channelId) => options.api.channelName(channelId), now: options.deps.now });
    this.rules = admissionRules(options.deps, options.allowedUsers);
    this.logger = options.deps.logger;
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, this.logger);
    this.runner = new IngressRunner(this.logger);
  }

  status(): ChannelStatus {
    return { ...this.state };
  }

  /**
   * Checks the bot token (auth.test), then opens Socket Mode (resolving on `hello`) or starts
   * taking HTTP events.
   *
   * @throws ChannelError `CHANNEL_UNAUTHORIZED` when Slack rejects a token; the status says why.
   */
  async start(): Promise<void> {
    if (this.app) return;
    const timeoutMs = this.options.startTimeoutMs ?? 30_000;
    let app: App | undefined;
    try {
      const identity = await within(this.options.api.authTest(), timeoutMs);
      this.identity = identity;
      const receiver = this.createReceiver();
      if (receiver instanceof SocketModeReceiver) this.guardFrames(receiver);
      app = this.createApp(identity, receiver);
      await within(app.start(), timeoutMs);
      if (receiver instanceof SocketModeReceiver) this.guardReconnects(receiver);
    } catch (error) {
      // A socket still trying to connect must not linger after a failed start.
      await app?.stop().catch(() => undefined);
      this.state = { running: false, reason: notRunningReason(error) };
      throw toChannelError(error, 'start');
    }
    this.app = app;
    this.state = { running: true };
    this.logger.info({ mode: this.options.transport.mode, teamId: this.identity?.teamId }, 'Slack channel started');
  }

  /** Closes the socket (or stops taking HTTP events), then lets acknowledgements finish within `stopTimeoutMs`. */
  async stop(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    if (!app) return;
    const deadline = this.options.deps.now() + (this.options.stopTimeoutMs ?? 4000);
    await app.stop().catch((error: unknown) => this.logger.warn({ err: describeError(error) }, 'Slack stop was not clean'));
    await this.runner.stop(Math.max(0, deadline - this.options.deps.now()));
    this.state = { running: false, reason: 'stopped' };
  }

  /**
   * HTTP mode: hands a verified Events API body to Bolt once its envelope has the shape Bolt reads
   * (else one warning, and `taken`: Slack must not retry it). `refused` for a message event the
   * intake has no room for while Slack will retry it; `stopped` when not running. Never rejects.
   */
  async dispatch(body: unknown, retry: { retryNum?: number; retryReason?: string }): Promise<SlackDispatch> {
    if (!this.app || this.options.transport.mode !== 'http') return 'stopped';
    const envelope = slackEventCallbackSchema.safeParse(body);
    if (!envelope.success) {
      logMalformedEvent(this.logger, 'slack', kindOf(body), envelope.error);
      return 'taken';
    }
    if (await this.leavesForRetry(envelope.data.event.type, retry.retryNum ?? 0)) return 'refused';
    const app = this.app;
    if (!app) return 'stopped';
    app.processEvent({ body: envelope.data, ack: async () => undefined, ...retry }).catch((error: unknown) => {
      this.logger.error({ err: describeError(error) }, 'Slack event processing failed');
    });
    return 'taken';
  }

  /** A message event the intake has no room for while Slack will still send it again (issue #15). */
  private leavesForRetry(eventType: string, retryNum: number): Promise<boolean> {
    const isMessage = eventType === 'message' || eventType === 'app_mention';
    return isMessage ? this.pipeline.leavesForRedelivery(retryNum < SLACK_LIMITS.eventRetries) : Promise.resolve(false);
  }

  private createReceiver(): Receiver {
    const { transport, clientOptions } = this.options;
    if (transport.mode === 'http') return noopReceiver();
    // Built here rather than by App, to reach its SocketModeClient (see `guardReconnects`).
    return new SocketModeReceiver({ appToken: transport.appToken, logger: boltLogger(this.logger), installerOptions: { clientOptions } });
  }

  /**
   * The SocketModeClient reconnects by itself ("disconnects are regular and expected"), but a
   * reconnect that fails, or that `stop()` interrupts, rejects a promise nobody holds
   * (`delayReconnectAttempt` in @slack/socket-mode 3.1): an unhandled rejection that would end
   * the process. After the first connection, its reconnect attempts report failures here instead.
   */
  private guardReconnects(receiver: SocketModeReceiver): void {
    const client = receiver.client;
    const start = client.start.bind(client);
    client.start = (() =>
      start().catch((error: unknown) => {
        if (this.app === undefined) return undefined;
        this.state = { running: false, reason: notRunningReason(error) };
        this.logger.error({ err: describeError(toChannelError(error, 'reconnect')) }, 'Slack Socket Mode reconnect failed');
        return undefined;
      })) as typeof client.start;
  }

  /**
   * The SocketModeClient reads `payload.event.type` of every `events_api` frame before anyone can
   * look (@slack/socket-mode 2.x `onWebSocketMessage`): a frame without an event object is an
   * unhandled rejection, which ends the process. Its frame listener is put behind our envelope
   * check; a malformed frame is acknowledged (Slack would redeliver it) and dropped with one warning.
   * A message event the intake has no room for is left unacknowledged while Slack will retry it.
   */
  private guardFrames(receiver: SocketModeReceiver): void {
    const client = receiver.client as unknown as SocketFrameSource;
    const listeners = client.listeners('ws_message');
    client.removeAllListeners('ws_message');
    const forward = (data: unknown, isBinary: boolean) => {
      for (const listener of listeners) listener.call(client, data, isBinary);
    };
    client.on('ws_message', (data: unknown, isBinary: boolean) => {
      const frame = typeof data === 'string' && !isBinary ? parseFrame(data) : undefined;
      if (frame?.type !== 'events_api') {
        forward(data, isBinary);
        return;
      }
      const envelope = slackEventCallbackSchema.safeParse(frame.payload);
      if (!envelope.success) {
        logMalformedEvent(this.logger, 'slack', kindOf(frame.payload), envelope.error);
        if (typeof frame.envelope_id === 'string') {
          client.send(frame.envelope_id).catch((error: unknown) => this.logger.warn({ err: describeError(error) }, 'Slack envelope not acknowledged'));
        }
        return;
      }
      const retryNum = typeof frame.retry_attempt === 'number' ? frame.retry_attempt : 0;
      void this.leavesForRetry(envelope.data.event.type, retryNum).then((isLeft) => {
        if (!isLeft) forward(data, isBinary);
      });
    });
  }

  private createApp(identity: { botUserId: string; botId: string | undefined }, receiver: Receiver): App {
    const { transport, botToken, clientOptions } = this.options;
    const app = new App({
      token: botToken,
      clientOptions,
      // Our own auth.test ran already; Bolt would repeat it.
      tokenVerificationEnabled: false,
      botUserId: identity.botUserId,
      ...(identity.botId === undefined ? {} : { botId: identity.botId }),
      logger: boltLogger(this.logger),
      receiver,
      ...(transport.mode === 'socket' ? { socketMode: true } : {}),
    });
    const listener = async ({ event, body }: { event: unknown; body: unknown }): Promise<void> => {
      this.receive(event, body as { team_id?: unknown });
    };
    app.event('message', listener);
    app.event('app_mention', listener);
    app.error(async (error) => {
      this.logger.error({ err: describeError(error) }, 'Slack listener failed');
    });
    return app;
  }

  private receive(raw: unknown, body: { team_id?: unknown }): void {
    const receivedAt = this.options.deps.now();
    const identity = this.identity;
    if (!identity) return;
    const parsed = slackMessageEventSchema.safeParse(raw);
    if (!parsed.success) {
      logMalformedEvent(this.logger, 'slack', kindOf({ event: raw }), parsed.error);
      return;
    }
    const event = parsed.data;
    const teamId = typeof body.team_id === 'string' ? body.team_id : (event.team ?? identity.teamId);
    const context: DecideContext = {
      botUserId: identity.botUserId,
      teamId,
      ...this.rules,
      ...(identity.botName === undefined ? {} : { botName: identity.botName }),
    };
    const decision = decideEvent(event, context);
    // Names for references without a label, asked for (or found cached) while earlier messages of the channel are admitted.
    const text = decision.kind === 'ignore' ? '' : (event.text ?? '');
    const [members, channels] = [unlabelledMentions(text, identity.botUserId), unlabelledChannels(text)];
    const names =
      members.length + channels.length === 0 ? undefined : Promise.all([this.userNames.namesOf(members), this.channelNames.namesOf(channels)]);
    void this.runner.run(event.channel, async () => {
      if (names === undefined) return this.pipeline.admit(decision, receivedAt);
      const [userNames, channelNames] = await names;
      return this.pipeline.admit(decideEvent(event, { ...context, userNames, channelNames }), receivedAt);
    });
  }

  /** Slack's side of the pipeline: answers and placeholders in the message's thread, 👀 on the message. */
  private adapter(): IngressAdapter {
    return {
      platform: 'slack',
      // Core's own words (the binder's answer, the busy notice) are plain text, shown as written.
      say: async (target, text) => {
        await this.post(target.chatId, mrkdwnText(text), target.topicId ?? target.replyTo.messageId);
      },
      acknowledge: (message) => this.acknowledge(message),
      withdraw: async (message, placeholderId) => {
        if (placeholderId === undefined) return;
        await this.options.api.deleteMessage(message.chatId, placeholderId).catch((error: unknown) => {
          this.logger.warn({ err: describeError(error) }, 'Slack placeholder not withdrawn');
        });
      },
      refusal: 'tell',
    };
  }

  /** 👀 on the message and, for chat, the placeholder in its thread. Never rejects. */
  private async acknowledge(message: PendingInbound): Promise<string | undefined> {
    const [placeholderId] = await Promise.all([
      message.kind === 'chat' ? this.post(message.chatId, mrkdwnText(SLACK_REPLIES.working), message.topicId) : Promise.resolve(undefined),
      this.options.api.addReaction(message.chatId, message.messageId as string, SLACK_REACTIONS.received).catch((error: unknown) => {
        this.logger.debug({ err: describeError(error) }, 'Slack reaction not added');
      }),
    ]);
    return placeholderId;
  }

  /** Posts `text` in the thread unless Slack asked the workspace to wait; resolves with its ts, or `undefined`. */
  private async post(channel: string, text: string, threadTs: string | undefined): Promise<string | undefined> {
    const { gate, api } = this.options;
    if (!gate.isOpen(WORKSPACE_KEY)) return undefined;
    try {
      return await api.postMessage(channel, text, threadTs);
    } catch (error) {
      const channelError = toChannelError(error, 'chat.postMessage');
      if (channelError.retryAfterMs !== undefined) gate.block(WORKSPACE_KEY, channelError.retryAfterMs);
      this.logger.warn({ channel, err: describeError(channelError) }, 'Slack acknowledgement not sent');
      return undefined;
    }
  }
}

/** What `guardFrames` needs of the SocketModeClient: its EventEmitter side and its (private) `send`. */
interface SocketFrameSource {
  listeners(event: string): Array<(...args: unknown[]) => void>;
  removeAllListeners(event: string): void;
  on(event: string, listener: (...args: never[]) => void): void;
  send(envelopeId: string, body?: unknown): Promise<void>;
}

/** A Socket Mode frame, or undefined when it is not a JSON object (the client ignores those itself). */
function parseFrame(data: string): { type?: unknown; envelope_id?: unknown; retry_attempt?: unknown; payload?: unknown } | undefined {
  try {
    const frame: unknown = JSON.parse(data);
    return typeof frame === 'object' && frame !== null ? frame : undefined;
  } catch {
    return undefined;
  }
}

/** The event kind to name in a warning: `event.type` when it is a short plain string, else `unknown`. */
function kindOf(body: unknown): string {
  const type = (body as { event?: { type?: unknown } } | null)?.event?.type;
  return typeof type === 'string' && /^[a-z_.]{1,64}$/.test(type) ? type : 'unknown';
}
