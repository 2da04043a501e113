import { discordChannel } from '../../../channels/discord/index.js';
import type { ChannelAdapter, ChannelDeps, InboundMessage, ReplyTarget } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { MemoryChannelState, testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { FakeDiscord, type FakeDiscordOptions } from './server.js';
import type { FakeUser } from './store.js';

/** Core's commands, as adapter tests hand them over. */
export const TEST_COMMANDS = ['new', 'status', 'models', 'memory', 'help'].map((name) => ({ name, description: `The ${name} command` }));

export const ALICE: FakeUser = { id: '700000000000000001', username: 'alice', global_name: 'Alice' };
export const BOB: FakeUser = { id: '700000000000000002', username: 'bob', global_name: 'Bob' };

export interface DiscordTestChannel {
  fake: FakeDiscord;
  adapter: ChannelAdapter;
  intake: RecordingIntake;
  deps: ChannelDeps;
  /** A second adapter on the same fake and deps (e.g. after a restart). */
  restart(): Promise<ChannelAdapter>;
}

export interface StartDiscordOptions {
  config?: Record<string, unknown>;
  fake?: FakeDiscord;
  fakeOptions?: FakeDiscordOptions;
  deps?: Partial<ChannelDeps>;
  isStarted?: boolean;
}

/**
 * The real Discord adapter against a fresh FakeDiscord, with a recording intake; every object
 * made is closed by the returned cleanups (call them in `afterEach`).
 */
export async function startDiscordChannel(cleanups: (() => Promise<void>)[], options: StartDiscordOptions = {}): Promise<DiscordTestChannel> {
  const fake = options.fake ?? new FakeDiscord(options.fakeOptions);
  if (!options.fake) {
    await fake.start();
    cleanups.push(() => fake.stop());
  }
  const intake = new RecordingIntake();
  const deps = testChannelDeps({ intake, commands: TEST_COMMANDS, logger: silentLogger(), state: new MemoryChannelState(), ...options.deps });
  const config = discordChannel.configSchema.parse({ enabled: true, bot_token: fake.token, api_url: fake.apiRoot, ...options.config });
  const make = async (): Promise<ChannelAdapter> => {
    const adapter = await discordChannel.create(config, deps);
    cleanups.push(() => adapter.stop());
    return adapter;
  };
  const adapter = await make();
  if (options.isStarted !== false) await adapter.start();
  return {
    fake,
    adapter,
    intake,
    deps,
    restart: async () => {
      const next = await make();
      await next.start();
      return next;
    },
  };
}

export function targetOf(message: InboundMessage): ReplyTarget {
  return { chatId: message.chatId, topicId: message.topicId, isPrivateChat: message.isPrivateChat, replyTo: message.replyTo };
}

/** Gaps between consecutive times, in ms. */
export function gaps(times: readonly number[]): number[] {
  return times.slice(1).map((time, i) => time - (times[i] as number));
}
