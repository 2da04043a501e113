import { afterEach, describe, expect, it } from 'vitest';
import { INGRESS_TEXTS } from '../../src/channel/ingress/pipeline.js';
import { literalMarkdown } from '../../src/channel/markdown-syntax.js';
import type { ChannelAdapter, ChannelDefinition, ChatBinder, ChatBindRequest, InboundMessage, ReplyTarget } from '../../src/channel/types.js';
import { silentLogger } from '../../src/logger.js';
import { testChannelDeps } from '../helpers/channel-deps.js';
import { RecordingIntake } from '../helpers/recording-intake.js';
import { QUOTED_CASES, ROUND_TRIP_CASES, type RoundTripException } from './round-trip.js';

/**
 * The behaviours every platform adapter must have (DESIGN "Testing"), driven only through a
 * {@link ChannelContractDescriptor}: the real adapter, made by its `ChannelDefinition`, against the
 * platform's fake server. Assertions are about what reaches core's intake and what people see in
 * the fake chat. Ids are core's strings (`InboundMessage.chatId`, `.messageId`, `.userId`).
 */

/** Where a person writes: a one-to-one chat with the bot, or a chat with several people. */
export type ContractChat = 'private' | 'group';

/**
 * How messages in one kind of chat map to conversations (`InboundMessage.topicId`).
 * `per-chat`: every message in the chat shares one topicId (usually absent).
 * `per-root-message`: each top-level message starts a conversation; a reply to it continues it.
 */
export type ThreadModel = 'per-chat' | 'per-root-message';

export interface ContractUserMessage {
  chat: ContractChat;
  /** What ingress should pass on. In a group the harness addresses the bot as the platform requires (e.g. a mention). */
  text: string;
  /** The sender, one of the descriptor's `userIds`; in a private chat, also whose chat it is. */
  userId: string;
  /** The message this one replies to (or is posted in the thread of). */
  replyToMessageId?: string;
  /** Sent by the bot's own account, as the platform echoes it back. */
  fromSelf?: boolean;
  /** Sent by a different bot. */
  fromOtherBot?: boolean;
}

export interface SentUserMessage {
  chatId: string;
  messageId: string;
}

/** One bot message as the chat shows it. */
export interface BotMessageView {
  messageId: string;
  /** Current text. */
  text: string;
  /** The message it replies to or the thread it sits in, when any. */
  replyTo?: string;
  /** Texts in order: the original, then each edit. */
  history: string[];
  /** When it was posted, ms since the epoch (the fake's clock). */
  sentAt: number;
  /** When each edit arrived, ms since the epoch; same order as `history.slice(1)`. */
  editedAt: number[];
  /**
   * The current text as a person sees it: the message's format (mrkdwn, Markdown, HTML, rich
   * text…) interpreted as the platform renders it, reduced to the canonical form of
   * `round-trip.ts`.
   */
  shown: string;
  /** The native links in the current text, in order, as rendered (label and target). */
  links?: { text: string; url: string }[];
}

/**
 * How the chat shows that a chat message was taken on, before any of the reply.
 * `placeholder`: a bot message answering it (`InboundMessage.replyTo.placeholderId`) that the reply
 * then edits into its first part.
 * `message`: a standing bot message answering it, for platforms that cannot edit: it is never
 * edited or removed, and the reply arrives as new messages after it.
 * `none`: no message at all (at most a reaction or a typing indicator).
 * Either message is posted before the message reaches the intake, so no part of the reply can
 * overtake it.
 */
export type Acknowledgement = 'placeholder' | 'message' | 'none';

/** A rate-limit answer the fake gave, or a request that arrived while one was running. */
export interface RateLimitEvent {
  chatId: string;
  /** When the request arrived, ms since the epoch. */
  at: number;
}

/** A running fake platform, fresh for each case. */
export interface PlatformHarness {
  /** `channels.<name>` of config.yaml pointing the adapter at this fake, before parsing. */
  config: Record<string, unknown>;
  /** Wires the adapter to the fake before `start()` (e.g. mounts `adapter.routes` for webhooks). */
  connect?(adapter: ChannelAdapter): Promise<void>;
  /** A person (or bot) writes; resolves once the platform has accepted it for delivery. */
  sendUserMessage(input: ContractUserMessage): Promise<SentUserMessage>;
  /** The bot's messages in a chat that are still there, in the order the chat shows them. */
  botMessages(chatId: string): BotMessageView[];
  /** Resolves with the predicate's first truthy value, checked after every platform call; rejects after `timeoutMs`. */
  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs?: number): Promise<T>;
  /** The next `method` request is answered with a rate limit of `retryAfterMs` (rounded up to the platform's unit). */
  injectRateLimit(method: 'send' | 'edit', retryAfterMs: number): void;
  /** Rate-limit answers given so far. */
  rateLimitsServed(): RateLimitEvent[];
  /** Sends and edits that arrived at a chat while a rate limit for it was running; must stay empty. */
  rateLimitViolations(): RateLimitEvent[];
  stop(): Promise<void>;
}

/** What the contract needs to know about one platform; `test/contract/<platform>.test.ts` builds it. */
export interface ChannelContractDescriptor<Config> {
  /** `ChannelAdapter.name` and `InboundMessage.channel`. */
  name: string;
  /** Tells apart suites of one adapter in different configurations, in the suite's name (e.g. `AI card`). */
  variant?: string;
  definition: ChannelDefinition<Config>;
  /** Two different people, in the platform's user-id format (as `allowed_users` lists them). */
  userIds: readonly [string, string];
  /**
   * How each kind of chat maps to conversations. No `group`: the platform has only one-to-one
   * chats (WeChat's iLink bot); the cases that write in a group then write in private chats.
   */
  threadModel: { private: ThreadModel; group?: ThreadModel };
  /** The platform's budget between partial updates of one reply in a private chat, in ms. */
  minEditIntervalMs: number;
  /** What a person types to bind their chat identity with `code` (Telegram `/start <code>`, others `/connect <code>`). */
  connectCommand(code: string): string;
  /** How a chat message is acknowledged; default: `placeholder` unless `capabilities.streaming` is `none`. */
  acknowledgement?: Acknowledgement;
  /**
   * A message the intake refused comes again once there is room, because the adapter left it
   * with the platform (Telegram: the update is not confirmed). Default false: it is dropped.
   */
  keepsRefusedMessages?: boolean;
  /**
   * A message the intake refused is answered with core's busy notice (`INGRESS_TEXTS.busy`),
   * because the platform would not send it again (issue #15: refusals are never silent).
   * Default false: nothing is shown.
   */
  tellsRefusals?: boolean;
  /**
   * The round-trip table (`round-trip.ts`, issue #20) runs for every platform. `exceptions` names,
   * by case name, what this platform reads or shows instead, and the platform rule it follows.
   */
  roundTrip: { exceptions?: Readonly<Record<string, RoundTripException>> };
  /** Starts a fresh fake platform; `allowedUsers` goes into `config` as the allow-list. */
  startPlatform(options: { allowedUsers?: string[] }): Promise<PlatformHarness>;
}

/** The commands core hands the adapter (`ChannelDeps.commands`). */
const COMMANDS = [
  { name: 'new', description: 'Start a new conversation' },
  { name: 'status', description: 'Show current thread info' },
  { name: 'help', description: 'Show this help' },
];

interface Started {
  platform: PlatformHarness;
  adapter: ChannelAdapter;
  intake: RecordingIntake;
}

/** The reply target as the manager builds it (`channel-manager.ts`), `platformData` included. */
function targetOf(message: InboundMessage): ReplyTarget {
  return {
    chatId: message.chatId,
    topicId: message.topicId,
    isPrivateChat: message.isPrivateChat,
    replyTo: message.replyTo,
    ...(message.platformData === undefined ? {} : { platformData: message.platformData }),
  };
}

/** Text with no whitespace and no repeating period, so a misplaced or reordered chunk shows. */
function unrepeatedText(length: number): string {
  let text = '';
  for (let i = 0; text.length < length; i++) text += i.toString(36);
  return text.slice(0, length);
}

/** Each text a message showed, with when it started showing it. */
function timeline(message: BotMessageView): { text: string; at: number }[] {
  const times = [message.sentAt, ...message.editedAt];
  return message.history.map((text, i) => ({ text, at: times[i] ?? Number.NaN }));
}

/** Registers the contract suite for one adapter. */
export function channelContract<Config>(descriptor: ChannelContractDescriptor<Config>): void {
  const { definition, threadModel } = descriptor;
  const [alice, bob] = descriptor.userIds;
  /** Where the group cases write: a group, or a private chat on platforms without groups. */
  const group: ContractChat = threadModel.group === undefined ? 'private' : 'group';

  const suiteName = descriptor.variant === undefined ? descriptor.name : `${descriptor.name} (${descriptor.variant})`;

  describe(`${suiteName} channel contract`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function startChannel(options: { allowedUsers?: string[]; isStarted?: boolean; binder?: ChatBinder } = {}): Promise<Started> {
      const platform = await descriptor.startPlatform({ allowedUsers: options.allowedUsers });
      cleanups.push(() => platform.stop());
      const intake = new RecordingIntake();
      const config = definition.configSchema.parse(platform.config);
      expect(definition.isEnabled(config)).toBe(true);
      const deps = testChannelDeps({ intake, commands: COMMANDS, logger: silentLogger(), ...(options.binder ? { binder: options.binder } : {}) });
      const adapter = await definition.create(config, deps);
      cleanups.push(() => adapter.stop());
      await platform.connect?.(adapter);
      if (options.isStarted !== false) await adapter.start();
      return { platform, adapter, intake };
    }

    function acknowledgementOf(adapter: ChannelAdapter): Acknowledgement {
      return descriptor.acknowledgement ?? (adapter.capabilities.streaming === 'none' ? 'none' : 'placeholder');
    }

    /** Sends, then waits until that message reached the intake. */
    async function sendAndCommit(started: Started, input: ContractUserMessage) {
      const sent = await started.platform.sendUserMessage(input);
      const find = () => started.intake.committed.find((m) => m.chatId === sent.chatId && m.messageId === sent.messageId);
      await started.intake.waitUntil(() => find() !== undefined);
      return { sent, inbound: find() as InboundMessage };
    }

    /** Bot messages in `chatId` that answer anything but `messageId` (leaving out `exceptIds`). */
    function strayAnswers(started: Started, chatId: string, messageId: string, exceptIds: string[] = []) {
      return started.platform
        .botMessages(chatId)
        .filter((m) => m.replyTo !== messageId && !exceptIds.includes(m.messageId))
        .map((m) => m.text);
    }

    it('hands a private message to the intake once, acknowledged as the capabilities promise', async () => {
      const started = await startChannel();
      const first = await sendAndCommit(started, { chat: 'private', text: 'hello there', userId: alice });
      const second = await sendAndCommit(started, { chat: 'private', text: 'and again', userId: alice });
      expect(started.intake.committed).toHaveLength(2);
      const { sent, inbound } = first;
      expect(inbound).toMatchObject({
        channel: descriptor.name,
        chatId: sent.chatId,
        userId: alice,
        messageId: sent.messageId,
        text: 'hello there',
        kind: 'chat',
        isPrivateChat: true,
        replyTo: { messageId: sent.messageId },
        receivedAt: expect.any(Number),
      });
      expect(inbound.workspaceId).toMatch(/\S/);
      expect(second.inbound).toMatchObject({ chatId: inbound.chatId, userId: alice, workspaceId: inbound.workspaceId });
      expect(second.inbound.messageId).not.toBe(inbound.messageId);
      const acks = started.platform.botMessages(sent.chatId);
      const acknowledgement = acknowledgementOf(started.adapter);
      if (acknowledgement === 'none') {
        expect(inbound.replyTo.placeholderId).toBeUndefined();
        expect(acks).toEqual([]);
        return;
      }
      if (acknowledgement === 'message') {
        // A standing acknowledgement is never edited, so it must not be handed over as the reply's placeholder.
        expect([inbound, second.inbound].map((m) => m.replyTo.placeholderId)).toEqual([undefined, undefined]);
        expect(acks.map((m) => [m.replyTo, m.history.length])).toEqual([
          [sent.messageId, 1],
          [second.sent.messageId, 1],
        ]);
      } else {
        expect(acks.map((m) => [m.messageId, m.replyTo])).toEqual([
          [inbound.replyTo.placeholderId, sent.messageId],
          [second.inbound.replyTo.placeholderId, second.sent.messageId],
        ]);
      }
      expect(acks.every((m) => m.text.trim().length > 0)).toBe(true);
    });

    for (const chat of threadModel.group === undefined ? (['private'] as const) : (['private', 'group'] as const)) {
      it(`maps ${chat} messages to conversations ${threadModel[chat]}`, async () => {
        const started = await startChannel();
        const first = await sendAndCommit(started, { chat, text: 'first subject', userId: alice });
        const second = await sendAndCommit(started, { chat, text: 'second subject', userId: alice });
        const reply = await sendAndCommit(started, {
          chat,
          text: 'more on the first',
          // In a group someone else may continue; a private chat has only its owner.
          userId: chat === 'group' ? bob : alice,
          replyToMessageId: first.sent.messageId,
        });
        const [a, b, c] = [first, second, reply].map(({ inbound }) => inbound);
        expect([a, b, c].map((m) => [m?.chatId, m?.isPrivateChat])).toEqual(
          Array.from({ length: 3 }, () => [first.sent.chatId, chat === 'private']),
        );
        if (threadModel[chat] === 'per-chat') {
          expect([b?.topicId, c?.topicId]).toEqual([a?.topicId, a?.topicId]);
        } else {
          expect(a?.topicId).toMatch(/\S/);
          expect(b?.topicId).not.toBe(a?.topicId);
          expect(c?.topicId).toBe(a?.topicId);
        }
      });
    }

    it("never hands over its own messages or other bots'", async () => {
      const started = await startChannel();
      const self = await started.platform.sendUserMessage({ chat: group, text: 'echo of me', userId: alice, fromSelf: true });
      const bot = await started.platform.sendUserMessage({ chat: group, text: 'beep', userId: alice, fromOtherBot: true });
      const { sent } = await sendAndCommit(started, { chat: group, text: 'a person', userId: alice });
      expect(started.intake.committed.map((m) => m.messageId)).toEqual([sent.messageId]);
      expect(strayAnswers(started, sent.chatId, sent.messageId, [self.messageId, bot.messageId])).toEqual([]);
    });

    it('serves only allowed_users when the list is set, dropping others without an acknowledgement', async () => {
      const started = await startChannel({ allowedUsers: [alice] });
      const outsider = await started.platform.sendUserMessage({ chat: 'private', text: 'let me in', userId: bob });
      await started.platform.sendUserMessage({ chat: group, text: 'me too', userId: bob });
      const { sent } = await sendAndCommit(started, { chat: group, text: 'hi, it is me', userId: alice });
      expect(started.intake.committed.map((m) => m.userId)).toEqual([alice]);
      expect(started.platform.botMessages(outsider.chatId)).toEqual([]);
      expect(strayAnswers(started, sent.chatId, sent.messageId)).toEqual([]);
    });

    it('consumes a connect code before the allow-list: the binder answers in the chat, nothing reaches the intake', async () => {
      const requests: { provider: string; request: ChatBindRequest }[] = [];
      const binder: ChatBinder = {
        bind: async (provider, request) => {
          requests.push({ provider, request });
          return 'Connected to DeerFlow as tester.';
        },
      };
      // Alice is not allow-listed yet: binding is how she gets in.
      const started = await startChannel({ allowedUsers: [bob], binder });
      const sent = await started.platform.sendUserMessage({ chat: 'private', text: descriptor.connectCommand('Ab12Cd34'), userId: alice });
      const answer = await started.platform.waitFor(() => started.platform.botMessages(sent.chatId).find((m) => m.text === 'Connected to DeerFlow as tester.'));
      expect(answer).toBeDefined();
      expect(requests).toEqual([
        { provider: descriptor.name, request: expect.objectContaining({ code: 'Ab12Cd34', identity: expect.objectContaining({ externalAccountId: alice }) }) },
      ]);
      expect(started.intake.committed).toEqual([]);
      expect(started.intake.reserved).toBe(0);
    });

    it('marks known command names as commands and other slash words as chat', async () => {
      const started = await startChannel();
      const command = await sendAndCommit(started, { chat: 'private', text: '/new fresh start', userId: alice });
      const unknown = await sendAndCommit(started, { chat: 'private', text: '/nosuchcommand hi', userId: alice });
      expect([command.inbound, unknown.inbound].map((m) => [m.kind, m.text])).toEqual([
        ['command', '/new fresh start'],
        ['chat', '/nosuchcommand hi'],
      ]);
    });

    const refusalCase = descriptor.tellsRefusals
      ? 'tells the person to send it again when the intake is full, and posts nothing else'
      : `sends nothing to the chat when the intake is full${descriptor.keepsRefusedMessages ? ', and takes the message once there is room' : ''}`;
    it(refusalCase, async () => {
      const started = await startChannel();
      started.intake.isFull = true;
      const refused = await started.platform.sendUserMessage({ chat: 'private', text: 'refused', userId: alice });
      await started.intake.waitUntil(() => started.intake.refused === 1);
      const answersToRefused = () => started.platform.botMessages(refused.chatId).filter((m) => m.replyTo === refused.messageId);
      if (descriptor.tellsRefusals) {
        const told = await started.platform.waitFor(() => answersToRefused().find((m) => m.text === INGRESS_TEXTS.busy));
        expect(answersToRefused()).toEqual([told]);
      } else {
        expect(answersToRefused()).toEqual([]);
      }
      started.intake.isFull = false;
      const kept = await sendAndCommit(started, { chat: 'private', text: 'kept', userId: alice });
      if (descriptor.keepsRefusedMessages) {
        await started.intake.waitUntil(() => started.intake.committed.some((m) => m.messageId === refused.messageId));
        expect(started.intake.committed.map((m) => m.messageId)).toEqual([refused.messageId, kept.sent.messageId]);
        expect(started.platform.botMessages(refused.chatId).filter((m) => m.replyTo === refused.messageId)).toHaveLength(acknowledgementOf(started.adapter) === 'none' ? 0 : 1);
      } else {
        expect(started.intake.committed.map((m) => m.messageId)).toEqual([kept.sent.messageId]);
        expect(answersToRefused().map((m) => m.text)).toEqual(descriptor.tellsRefusals ? [INGRESS_TEXTS.busy] : []);
      }
      const refusedAcks = started.platform.botMessages(refused.chatId).filter((m) => m.replyTo === refused.messageId).map((m) => m.messageId);
      expect(strayAnswers(started, kept.sent.chatId, kept.sent.messageId, refusedAcks)).toEqual([]);
    });

    /**
     * A running adapter with a private-chat message acknowledged, and a reply to it.
     * `answers()` are the bot messages the reply may have written: all but a standing
     * acknowledgement, which `expectAcknowledgementStanding()` checks is still as it was posted.
     */
    async function replying() {
      return replyingTo('a question');
    }

    async function replyingTo(text: string) {
      const started = await startChannel();
      const { platform, adapter } = started;
      const { sent, inbound } = await sendAndCommit(started, { chat: 'private', text, userId: alice });
      const chatId = sent.chatId;
      const hasStandingAcknowledgement = acknowledgementOf(adapter) === 'message';
      // Ids and texts only: a view may share its history array with the fake, so a kept view would follow a later edit.
      const acknowledgements = hasStandingAcknowledgement ? platform.botMessages(chatId).map((m) => ({ messageId: m.messageId, text: m.text })) : [];
      if (hasStandingAcknowledgement) expect(acknowledgements).toHaveLength(1);
      const isAcknowledgement = (m: BotMessageView) => acknowledgements.some((ack) => ack.messageId === m.messageId);
      return {
        ...started,
        chatId,
        inbound,
        reply: adapter.egress.reply(targetOf(inbound)),
        answers: () => platform.botMessages(chatId).filter((m) => !isAcknowledgement(m)),
        expectAcknowledgementStanding: () => {
          const now = platform.botMessages(chatId).filter(isAcknowledgement);
          expect(now.map((m) => [m.messageId, m.history])).toEqual(acknowledgements.map((ack) => [ack.messageId, [ack.text]]));
        },
      };
    }

    it('splits a final of 2.5 × maxMessageChars into messages within the limit, in order', async () => {
      const { adapter, reply, answers, expectAcknowledgementStanding } = await replying();
      const { maxMessageChars } = adapter.capabilities;
      const text = unrepeatedText(Math.floor(2.5 * maxMessageChars));
      await reply.finish(text);
      const messages = answers().map((m) => m.text);
      expect(messages).toHaveLength(Math.ceil(2.5));
      expect(messages.filter((m) => m.length > maxMessageChars)).toEqual([]);
      expect(messages.join('')).toBe(text);
      expectAcknowledgementStanding();
    });

    it('streams as capabilities.streaming says, never editing faster than minEditIntervalMs', async () => {
      const { platform, adapter, chatId, reply, answers, expectAcknowledgementStanding } = await replying();
      const updates = ['Thinking', 'Thinking harder', 'Thinking harder still'];
      const final = 'Done.';
      for (const text of updates) reply.update(text);
      const isStreaming = adapter.capabilities.streaming !== 'none';
      if (isStreaming) {
        // Latest wins: the last update must show before the final replaces it.
        const timeoutMs = 3 * descriptor.minEditIntervalMs + 5000;
        await platform.waitFor(() => platform.botMessages(chatId).some((m) => m.text === updates[2]), timeoutMs);
      }
      await reply.finish(final);
      expectAcknowledgementStanding();
      const messages = answers();
      expect(messages).toHaveLength(1);
      const [message] = messages as [BotMessageView];
      if (!isStreaming) {
        // Partials are not shown: the final is the message's only text.
        expect(message.history).toEqual([final]);
        return;
      }
      const shown = timeline(message).slice(acknowledgementOf(adapter) === 'placeholder' ? 1 : 0);
      expect(shown.at(-1)?.text).toBe(final);
      const partials = shown.slice(0, -1);
      const order = partials.map((p) => updates.indexOf(p.text));
      expect(order.at(-1)).toBe(updates.length - 1);
      expect(order.every((index, i) => index >= 0 && index > (order[i - 1] ?? -1))).toBe(true);
      const gaps = partials.slice(1).map((p, i) => p.at - (partials[i]?.at ?? 0));
      expect(gaps.filter((gap) => gap < descriptor.minEditIntervalMs)).toEqual([]);
    });

    it('waits out a rate limit on the reply: partials may be dropped, the final still arrives', async () => {
      const { platform, adapter, chatId, reply, answers, expectAcknowledgementStanding } = await replying();
      const retryAfterMs = Math.max(2000, 2 * descriptor.minEditIntervalMs);
      // The reply's first request is an edit only when it streams into a placeholder; otherwise it posts a message.
      const isEditing = adapter.capabilities.streaming !== 'none' && acknowledgementOf(adapter) === 'placeholder';
      platform.injectRateLimit(isEditing ? 'edit' : 'send', retryAfterMs);
      reply.update('partial one');
      // Without streaming only the final sends, so it must be under way to meet the limit.
      const finishing = adapter.capabilities.streaming === 'none' ? reply.finish('final answer') : undefined;
      finishing?.catch(() => undefined); // Awaited below; this only keeps an early rejection handled.
      const [limited] = await platform.waitFor(() => {
        const served = platform.rateLimitsServed();
        return served.length > 0 && served;
      });
      reply.update('partial two');
      await (finishing ?? reply.finish('final answer'));
      expect(limited?.chatId).toBe(chatId);
      expectAcknowledgementStanding();
      const messages = answers();
      expect(messages.map((m) => m.text)).toEqual(['final answer']);
      const limitedAt = limited?.at ?? 0;
      const early = timeline(messages[0] as BotMessageView).filter((t) => t.at > limitedAt && t.at < limitedAt + retryAfterMs);
      expect(early).toEqual([]);
      expect(platform.rateLimitViolations()).toEqual([]);
    });

    const exceptions = descriptor.roundTrip.exceptions ?? {};
    for (const name of Object.keys(exceptions)) {
      if (![...ROUND_TRIP_CASES, ...QUOTED_CASES].some((c) => c.name === name)) throw new Error(`round-trip exception for an unknown case: ${name}`);
    }
    for (const roundTrip of ROUND_TRIP_CASES) {
      const exception = exceptions[roundTrip.name];
      const rule = exception ? ` (${exception.rule})` : '';
      it(`round trip, ${roundTrip.name}: the model reads what was typed, the chat shows what it wrote${rule}`, async () => {
        const { platform, intake, inbound, reply, answers } = await replyingTo(roundTrip.typed);
        expect(inbound.text).toBe(exception?.read ?? roundTrip.typed);
        await reply.finish(inbound.text);
        const shown = answers();
        expect(shown.map((m) => m.shown).join('')).toBe(exception?.shown ?? roundTrip.shown);
        const links = exception?.links ?? roundTrip.links;
        if (links) expect(shown.flatMap((m) => m.links ?? [])).toEqual(links);
        expect(intake.committed).toHaveLength(1);
        expect(platform.rateLimitViolations()).toEqual([]);
      });
    }

    for (const quoted of QUOTED_CASES) {
      const exception = exceptions[quoted.name];
      const rule = exception ? ` (${exception.rule})` : '';
      it(`${quoted.name}: core's text quoting somebody's words shows them as written${rule}`, async () => {
        const { reply, answers, platform } = await replyingTo('quote me');
        await reply.finish(literalMarkdown(quoted.text));
        expect(answers().map((m) => m.shown).join('')).toBe(exception?.shown ?? quoted.text);
        expect(platform.rateLimitViolations()).toEqual([]);
      });
    }

    it('reports its name, and running only between start() and stop()', async () => {
      const started = await startChannel({ isStarted: false });
      const { adapter } = started;
      expect(adapter.name).toBe(descriptor.name);
      expect(adapter.status().running).toBe(false);
      await adapter.start();
      expect(adapter.status().running).toBe(true);
      // Stopped while working, not just after start-up.
      await sendAndCommit(started, { chat: 'private', text: 'still there?', userId: alice });
      await adapter.stop();
      expect(adapter.status().running).toBe(false);
    });
  });
}
