import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { telegramChannel } from '../../../channels/telegram/index.js';
import { channelConnectionsConfigSchema } from '../../../src/accounts/config.js';
import { ChannelConnections } from '../../../src/accounts/connections.js';
import type { ChannelDefinition } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { ConnectionsRepo } from '../../../src/db/repos/connections-repo.js';
import { UsersRepo } from '../../../src/db/repos/users-repo.js';
import { silentLogger } from '../../../src/logger.js';
import { openTestDatabase } from '../../helpers/database.js';

/** A platform that binds with `/connect <code>` (the default offer). */
const chatOps: ChannelDefinition = {
  name: 'slack',
  displayName: 'Slack',
  configSchema: z.object({}),
  isEnabled: () => true,
  create: () => {
    throw new Error('not started in these tests');
  },
};

describe('ChannelConnections', () => {
  let database: DatabaseHandle;
  let ownerId: string;
  let running: Set<string>;

  const service = (config: Record<string, unknown>) =>
    new ChannelConnections({
      db: database.db,
      config: channelConnectionsConfigSchema.parse(config),
      platforms: [telegramChannel as ChannelDefinition, chatOps],
      isRunning: (name) => running.has(name),
      logger: silentLogger(),
    });

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    ownerId = (await new UsersRepo(database.db).create('owner')).user.id;
  });
  afterAll(() => database.close());

  /** The kinds of the sender's audit events, newest first. */
  const events = async (externalAccountId: string) =>
    (await new ConnectionsRepo(database.db).events({ externalAccountId }, 20)).map((event) => event.kind);

  it('explains every reason a provider cannot be connected (reference §8.4)', async () => {
    running = new Set(['telegram']);
    const reject = (config: Record<string, unknown>, provider: string) => service(config).connect(ownerId, provider).catch((e: unknown) => e);
    await expect(reject({ enabled: false }, 'telegram')).resolves.toMatchObject({ status: 400, userMessage: 'Channel connections are disabled' });
    await expect(reject({ enabled: true }, 'matrix')).resolves.toMatchObject({ status: 404, userMessage: 'Unknown channel provider' });
    await expect(reject({ enabled: true }, 'telegram')).resolves.toMatchObject({ status: 400, userMessage: 'Channel provider is not enabled' });
    await expect(reject({ enabled: true, telegram: { enabled: true } }, 'telegram')).resolves.toMatchObject({
      status: 400,
      userMessage: 'Set channel_connections.telegram.bot_username to offer Telegram connections.',
    });
    await expect(reject({ enabled: true, slack: { enabled: true } }, 'slack')).resolves.toMatchObject({
      status: 400,
      userMessage: 'Slack channel is configured but is not running. Check the credentials and service logs.',
    });
  });

  it('offers a deep link for Telegram and /connect for the others, and lists the providers', async () => {
    running = new Set(['telegram', 'slack']);
    const connections = service({ enabled: true, telegram: { enabled: true, bot_username: 'ops_bot' }, slack: { enabled: true } });
    const telegram = await connections.connect(ownerId, 'telegram');
    expect(telegram).toEqual({
      provider: 'telegram',
      code: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      expires_in: 600,
      mode: 'deep_link',
      url: `https://t.me/ops_bot?start=${telegram.code}`,
      instruction: `Send /start ${telegram.code} to the DeerFlow Telegram bot.`,
    });
    const slack = await connections.connect(ownerId, 'slack');
    expect(slack).toMatchObject({ mode: 'binding_code', url: null, instruction: `Send /connect ${slack.code} to the DeerFlow Slack bot.` });
    expect((await connections.providers(ownerId)).map((p) => [p.provider, p.auth_mode, p.connectable, p.connection_status])).toEqual([
      ['telegram', 'deep_link', true, 'not_connected'],
      ['slack', 'binding_code', true, 'not_connected'],
    ]);
  });

  it('answers in chat with the reference texts: connected, invalid link or code', async () => {
    running = new Set(['telegram', 'slack']);
    const connections = service({ enabled: true, telegram: { enabled: true, bot_username: 'ops_bot' }, slack: { enabled: true } });
    const identity = { externalAccountId: 'U1', workspaceId: 'T1' };
    expect(await connections.bind('slack', { identity, code: 'wrong' })).toBe('Slack connection code is invalid or expired.');
    expect(await connections.bind('telegram', { identity, code: 'wrong' })).toBe('Telegram connection link is invalid or expired.');
    const { code } = await connections.connect(ownerId, 'slack');
    expect(await connections.bind('slack', { identity, code })).toBe('Slack connected to DeerFlow.');
    expect(await connections.findBinding('slack', identity)).toMatchObject({ ownerUserId: ownerId });
  });

  it('audits every refused code: wrong ones, then those refused unread over the account limit', async () => {
    running = new Set(['slack']);
    const connections = service({ enabled: true, slack: { enabled: true }, max_failed_codes_per_minute: 2 });
    const identity = { externalAccountId: `U-${randomUUID()}`, workspaceId: 'T1' };
    expect(await connections.bind('slack', { identity, code: 'guess-1' })).toBe('Slack connection code is invalid or expired.');
    expect(await connections.bind('slack', { identity, code: 'guess-2' })).toBe('Slack connection code is invalid or expired.');
    const { code } = await connections.connect(ownerId, 'slack');
    expect(await connections.bind('slack', { identity, code })).toContain('Too many connection attempts from this account');
    expect(await connections.bind('slack', { identity, code })).toContain('Too many connection attempts from this account');
    const trail = await events(identity.externalAccountId);
    expect(trail).toEqual(['code_refused_account_limit', 'code_refused_account_limit', 'code_rejected', 'code_rejected']);
    // Refused unread: the real code still works once the sender is under the limit again.
    expect(await new ConnectionsRepo(database.db).findActive({ provider: 'slack', ...identity })).toBeUndefined();
  });

  it('refuses codes from every sender of a platform over the per-provider limit, unread and audited, and only there', async () => {
    const provider = 'discord';
    const platform: ChannelDefinition = { ...chatOps, name: provider, displayName: 'Chat' };
    const connections = new ChannelConnections({
      db: database.db,
      config: channelConnectionsConfigSchema.parse({
        enabled: true,
        discord: { enabled: true },
        telegram: { enabled: true, bot_username: 'ops_bot' },
        max_failed_codes_per_provider_per_minute: 3,
      }),
      platforms: [platform, telegramChannel as ChannelDefinition],
      isRunning: () => true,
      logger: silentLogger(),
    });
    // Many accounts, one wrong code each: each under its own limit, together at the platform's.
    const guessers = ['A1', 'A2', 'A3'].map((id) => ({ externalAccountId: `${id}-${randomUUID()}` }));
    for (const identity of guessers) expect(await connections.bind(provider, { identity, code: 'guess' })).toBe('Chat connection code is invalid or expired.');
    const honest = { externalAccountId: `H-${randomUUID()}` };
    const { code } = await connections.connect(ownerId, provider);
    const tooMany = 'Too many connection attempts right now. Wait a minute, then send the newest code from the DeerFlow console.';
    expect(await connections.bind(provider, { identity: honest, code })).toBe(tooMany);
    expect(await connections.bind(provider, { identity: guessers[0] as { externalAccountId: string }, code: 'guess' })).toBe(tooMany);
    expect(await events(honest.externalAccountId)).toEqual(['code_refused_provider_limit']);
    expect(await events(guessers[0]?.externalAccountId as string)).toEqual(['code_refused_provider_limit', 'code_rejected']);
    // Another platform is not affected.
    const other = await connections.connect(ownerId, 'telegram');
    expect(await connections.bind('telegram', { identity: honest, code: other.code })).toBe('Telegram connected to DeerFlow.');
    // The operator's trail: newest first, never a code.
    const trail = await connections.auditTrail({ limit: 200 });
    expect(trail.slice(0, 3).map((e) => [e.kind, e.provider])).toEqual([
      ['bound', 'telegram'],
      ['code_refused_provider_limit', provider],
      ['code_refused_provider_limit', provider],
    ]);
    expect(JSON.stringify(trail)).not.toContain(code);
    expect(JSON.stringify(trail)).not.toContain(other.code);
  });

  it('says the connection could not be completed when the database fails, and never throws', async () => {
    const broken = await openTestDatabase('pglite');
    await broken.close();
    const connections = new ChannelConnections({
      db: broken.db,
      config: channelConnectionsConfigSchema.parse({ enabled: true, slack: { enabled: true } }),
      platforms: [chatOps],
      isRunning: () => true,
      logger: silentLogger(),
    });
    expect(await connections.bind('slack', { identity: { externalAccountId: 'U9' }, code: 'x' })).toBe(
      'Slack connection could not be completed from this message.',
    );
  });
});
