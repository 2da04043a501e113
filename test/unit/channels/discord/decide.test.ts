import { describe, expect, it } from 'vitest';
import { type DecideContext, decideMessage, type MessageFacts, THREAD_NAME } from '../../../../channels/discord/decide.js';

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
    mentionNames: { users: new Map(), roles: new Map(), channels: new Map() },
    files: [],
    ...overrides,
  };
}

const DM: Partial<MessageFacts> = { channelId: '900', isDm: true, canStartThread: false, guildId: undefined, guildName: undefined };

function context(overrides: Partial<DecideContext> = {}): DecideContext {
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

/** `ignore:<reason>`, `bind`, or where a forwarded message goes: `<chatId>/<topicId or ->`, ` +thread` when one is to be started. */
function outcome(f: Partial<MessageFacts>, c: Partial<DecideContext> = {}): string {
  const decision = decideMessage(facts(f), context(c));
  if (decision.kind === 'ignore') return `ignore:${decision.reason}`;
  if (decision.kind !== 'forward') return decision.kind;
  const { chatId, topicId, platformData } = decision.message;
  return `${chatId}/${topicId ?? '-'}${platformData?.[THREAD_NAME] === undefined ? '' : ' +thread'}`;
}

describe('decideMessage', () => {
  it.each([
    ['its own message', { author: { id: BOT, isBot: true, displayName: 'bot', username: 'bot' } }, {}, 'ignore:own'],
    ["another bot's message", { author: { id: '9', isBot: true, displayName: 'b', username: 'b' } }, {}, 'ignore:bot'],
    ['a server message', {}, {}, '400/500'],
    ['a reply in a server channel', { reference: { messageId: '450' } }, {}, '400/450'],
    ['a reply to our answer', { reference: { messageId: '460', rootId: '450' } }, {}, '400/450'],
    ['a DM', DM, {}, '900/-'],
    ['a DM under mention_only', DM, { mentionOnly: true }, '900/-'],
    ['no mention under mention_only', {}, { mentionOnly: true }, 'ignore:not-mentioned'],
    ['a mention under mention_only without thread_mode', { content: `<@${BOT}> hi` }, { mentionOnly: true }, '400/500'],
    ['a mention under mention_only with thread_mode', { content: `<@!${BOT}> hi` }, { mentionOnly: true, threadMode: true }, '400/500 +thread'],
    ['an allowed channel under mention_only', {}, { mentionOnly: true, allowedChannels: new Set([GENERAL]) }, '400/500'],
    ['any message under thread_mode', {}, { threadMode: true }, '400/500 +thread'],
    ['thread_mode where threads cannot be made', { canStartThread: false }, { threadMode: true }, '400/500'],
    ['our thread without a mention', { channelId: '600', thread: { id: '600', parentId: GENERAL }, canStartThread: false }, { mentionOnly: true, isOwnThread: true }, '600/600'],
    ["someone else's thread without a mention", { channelId: '600', thread: { id: '600', parentId: GENERAL }, canStartThread: false }, { mentionOnly: true }, 'ignore:not-mentioned'],
    ["a mention in someone else's thread, under thread_mode", { channelId: '600', thread: { id: '600', parentId: GENERAL }, canStartThread: false, content: `<@${BOT}> hi` }, { mentionOnly: true, threadMode: true }, '600/500'],
    ['only mentions', { content: `<@${BOT}> <@!${BOT}>` }, {}, 'ignore:empty'],
    ['only an attachment', { content: '', files: [{ name: 'a', mimeType: 'x/y', isImage: false, ref: '{}' }] }, {}, '400/500'],
    ['another guild under allowed_guilds', {}, { allowedGuilds: new Set(['301']) }, 'ignore:guild-not-allowed'],
    ['a DM under allowed_guilds', DM, { allowedGuilds: new Set([GUILD]) }, 'ignore:guild-not-allowed'],
    ['a sender outside allowed_users', {}, { allowedUsers: new Set(['701']) }, 'ignore:not-allowed'],
    ['/connect from a sender outside allowed_users', { content: `<@${BOT}> /connect abc` }, { allowedUsers: new Set(['701']) }, 'bind'],
    ['/connect without a binder', { content: '/connect abc' }, { canBind: false }, '400/500'],
  ] as const)('%s → %s', (_name, f, c, expected) => {
    expect(outcome(f as Partial<MessageFacts>, c as Partial<DecideContext>)).toBe(expected);
  });

  it('strips mentions of the bot only, names the others, classifies commands and keys DMs in workspace @me', () => {
    const mentionNames = { users: new Map([['701', 'bob']]), roles: new Map(), channels: new Map() };
    const decision = decideMessage(facts({ ...DM, content: `<@${BOT}> /new  <@701> there`, mentionNames }), context());
    expect(decision).toMatchObject({
      kind: 'forward',
      message: { channel: 'discord', text: '/new  @bob there', kind: 'command', workspaceId: '@me', isPrivateChat: true, senderIsAllowlisted: false },
    });
  });

  it('claims a message by guild (or dm), channel and message id', () => {
    expect(decideMessage(facts(), context())).toMatchObject({ kind: 'forward', deliveryKey: `${GUILD}:${GENERAL}:500` });
    expect(decideMessage(facts({ ...DM, content: '/connect Code1' }), context())).toMatchObject({ kind: 'bind', deliveryKey: 'dm:900:500' });
  });

  it('names a new thread deerflow-<display name>-<message id>, cut to 100 characters', () => {
    const decision = decideMessage(facts({ author: { id: '700', isBot: false, displayName: 'N'.repeat(120), username: 'n' } }), context({ threadMode: true }));
    expect(decision).toMatchObject({ kind: 'forward', message: { platformData: { [THREAD_NAME]: `deerflow-${'N'.repeat(91)}` } } });
  });

  it('binds per guild, and without a workspace in DMs, answering the message where it was posted', () => {
    const inGuild = decideMessage(facts({ content: '/connect Code1' }), context());
    const inDm = decideMessage(facts({ ...DM, content: '/connect Code2 extra' }), context());
    expect(inGuild).toMatchObject({
      kind: 'bind',
      request: { code: 'Code1', identity: { externalAccountId: '700', workspaceId: GUILD }, workspaceName: 'Guild' },
      answerTo: { chatId: GENERAL, isPrivateChat: false, replyTo: { messageId: '500' } },
    });
    expect(inDm).toMatchObject({ kind: 'bind', request: { code: 'Code2', identity: { externalAccountId: '700' } }, answerTo: { chatId: '900', isPrivateChat: true } });
    expect(inDm.kind === 'bind' && inDm.request.identity).not.toHaveProperty('workspaceId');
  });
});
