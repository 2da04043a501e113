import { describe, expect, it } from 'vitest';
import { decideMessage, type MessageFacts, type RoutingContext } from '../../../../channels/discord/routing.js';

const BOT = '100';
const GUILD = '300';
const GENERAL = '400';

function facts(overrides: Partial<MessageFacts> = {}): MessageFacts {
  return {
    messageId: '500',
    channelId: GENERAL,
    guildId: GUILD,
    guildName: 'Guild',
    isDm: false,
    canStartThread: true,
    author: { id: '700', isBot: false, displayName: 'Alice', username: 'alice' },
    content: 'hello',
    files: [],
    ...overrides,
  };
}

const DM: Partial<MessageFacts> = { channelId: '900', isDm: true, canStartThread: false, guildId: undefined, guildName: undefined };

function context(overrides: Partial<RoutingContext> = {}): RoutingContext {
  return {
    botUserId: BOT,
    mentionOnly: false,
    threadMode: false,
    allowedGuilds: new Set(),
    allowedChannels: new Set(),
    allowedUsers: new Set(),
    commandNames: new Set(['new', 'help']),
    canBind: true,
    isOwnThread: false,
    ...overrides,
  };
}

function outcome(f: Partial<MessageFacts>, c: Partial<RoutingContext> = {}): string {
  const decision = decideMessage(facts(f), context(c));
  if (decision.action === 'ignore') return `ignore:${decision.reason}`;
  if (decision.action === 'bind') return 'bind';
  const { route } = decision;
  return route.kind === 'channel' ? `channel:${route.topicId}` : route.kind === 'thread' ? `thread:${route.threadId}` : route.kind;
}

describe('decideMessage', () => {
  it.each([
    ['its own message', { author: { id: BOT, isBot: true, displayName: 'bot', username: 'bot' } }, {}, 'ignore:own'],
    ["another bot's message", { author: { id: '9', isBot: true, displayName: 'b', username: 'b' } }, {}, 'ignore:bot'],
    ['a server message', {}, {}, 'channel:500'],
    ['a reply in a server channel', { reference: { messageId: '450' } }, {}, 'channel:450'],
    ['a reply to our answer', { reference: { messageId: '460', rootId: '450' } }, {}, 'channel:450'],
    ['a DM', DM, {}, 'dm'],
    ['a DM under mention_only', DM, { mentionOnly: true }, 'dm'],
    ['no mention under mention_only', {}, { mentionOnly: true }, 'ignore:not-mentioned'],
    ['a mention under mention_only without thread_mode', { content: `<@${BOT}> hi` }, { mentionOnly: true }, 'channel:500'],
    ['a mention under mention_only with thread_mode', { content: `<@!${BOT}> hi` }, { mentionOnly: true, threadMode: true }, 'new-thread'],
    ['an allowed channel under mention_only', {}, { mentionOnly: true, allowedChannels: new Set([GENERAL]) }, 'channel:500'],
    ['any message under thread_mode', {}, { threadMode: true }, 'new-thread'],
    ['thread_mode where threads cannot be made', { canStartThread: false }, { threadMode: true }, 'channel:500'],
    ['our thread without a mention', { channelId: '600', thread: { id: '600', parentId: GENERAL }, canStartThread: false }, { mentionOnly: true, isOwnThread: true }, 'thread:600'],
    ["someone else's thread without a mention", { channelId: '600', thread: { id: '600', parentId: GENERAL }, canStartThread: false }, { mentionOnly: true }, 'ignore:not-mentioned'],
    ['only mentions', { content: `<@${BOT}> <@!${BOT}>` }, {}, 'ignore:empty'],
    ['only an attachment', { content: '', files: [{ name: 'a', mimeType: 'x/y', isImage: false, ref: '{}' }] }, {}, 'channel:500'],
    ['another guild under allowed_guilds', {}, { allowedGuilds: new Set(['301']) }, 'ignore:guild-not-allowed'],
    ['a DM under allowed_guilds', DM, { allowedGuilds: new Set([GUILD]) }, 'ignore:guild-not-allowed'],
    ['a sender outside allowed_users', {}, { allowedUsers: new Set(['701']) }, 'ignore:not-allowed'],
    ['/connect from a sender outside allowed_users', { content: `<@${BOT}> /connect abc` }, { allowedUsers: new Set(['701']) }, 'bind'],
    ['/connect without a binder', { content: '/connect abc' }, { canBind: false }, 'channel:500'],
  ] as const)('%s → %s', (_name, f, c, expected) => {
    expect(outcome(f as Partial<MessageFacts>, c as Partial<RoutingContext>)).toBe(expected);
  });

  it('strips mentions of the bot only, classifies commands and keys DMs in workspace @me', () => {
    const decision = decideMessage(facts({ ...DM, content: `<@${BOT}> /new  <@701> there` }), context());
    expect(decision).toMatchObject({
      action: 'forward',
      message: { channel: 'discord', text: '/new <@701> there', kind: 'command', workspaceId: '@me', isPrivateChat: true, senderIsAllowlisted: false },
    });
  });

  it('names a new thread deerflow-<display name>-<message id>, cut to 100 characters', () => {
    const decision = decideMessage(facts({ author: { id: '700', isBot: false, displayName: 'N'.repeat(120), username: 'n' } }), context({ threadMode: true }));
    expect(decision.action === 'forward' && decision.route.kind === 'new-thread' && decision.route.name).toBe(`deerflow-${'N'.repeat(91)}`);
  });

  it('binds per guild, and without a workspace in DMs', () => {
    const inGuild = decideMessage(facts({ content: '/connect Code1' }), context());
    const inDm = decideMessage(facts({ ...DM, content: '/connect Code2 extra' }), context());
    expect(inGuild).toMatchObject({ action: 'bind', request: { code: 'Code1', identity: { externalAccountId: '700', workspaceId: GUILD }, workspaceName: 'Guild' } });
    expect(inDm).toMatchObject({ action: 'bind', request: { code: 'Code2', identity: { externalAccountId: '700' } } });
    expect(inDm.action === 'bind' && inDm.request.identity).not.toHaveProperty('workspaceId');
  });
});
