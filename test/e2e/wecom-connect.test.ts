import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeWeCom } from '../fakes/wecom/index.js';
import { apiClient } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Binding a WeCom member to a server account (reference §8): the code from the API, `/connect
 * <code>` sent to the bot, and from then on the member's messages run, in single chats and groups
 * alike (the binding holds per bot). Driven only as people do: HTTP with API keys, and messages
 * through FakeWeCom.
 */

const ADMIN_TOKEN = 'operator-token-for-wecom-e2e';
const UNBOUND = 'Connect this channel from DeerFlow Settings, complete the in-channel connect step, then send your message again.';

describe('binding a WeCom member through the real server', () => {
  let wecom: FakeWeCom;
  let model: FakeOpenAI;
  let server: ServerProcess | undefined;
  const api = apiClient(() => server?.url ?? '');

  beforeAll(async () => {
    wecom = new FakeWeCom();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([wecom.start(), model.start()]);
    const config = writeConfig(`server: { port: 0 }
auth: { admin_token: ${ADMIN_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channel_connections:
  enabled: true
  wecom: { enabled: true }
channels:
  wecom: { enabled: true, bot_id: "${wecom.botId}", bot_secret: "${wecom.secret}", ws_url: "${wecom.wsUrl}" }
`);
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await wecom.waitFor(() => wecom.isAuthenticated(), 15_000);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([wecom?.stop(), model?.stop()]);
  });

  /** Sends a message; resolves with the finished stream answering it. */
  async function answerTo(input: Parameters<FakeWeCom['sendUserMessage']>[0]): Promise<string> {
    const sent = await wecom.sendUserMessage(input);
    const answer = await wecom.waitFor(() => wecom.botMessages(sent.chatId).find((m) => m.replyTo === sent.msgid && m.isFinished), 15_000);
    return answer.text;
  }

  it('tells an unbound member how to connect, binds with /connect <code>, then answers them in single chats and groups', async () => {
    const created = await api('POST', '/api/users', ADMIN_TOKEN, { name: 'mei' });
    expect(created.status).toBe(201);
    const key = created.body?.api_key as string;
    expect(await answerTo({ chat: 'private', userId: 'mei.wang', text: 'hello?' })).toBe(UNBOUND);

    const offer = await api('POST', '/api/channels/wecom/connect', key);
    expect(offer.body).toMatchObject({ provider: 'wecom', mode: 'binding_code', instruction: `Send /connect ${offer.body?.code} to the DeerFlow WeCom bot.` });
    expect(await answerTo({ chat: 'private', userId: 'mei.wang', text: '/connect wrong-code' })).toBe('WeCom connection code is invalid or expired.');
    expect(await answerTo({ chat: 'private', userId: 'mei.wang', text: `/connect ${offer.body?.code}` })).toBe('WeCom connected to DeerFlow.');

    expect(await answerTo({ chat: 'private', userId: 'mei.wang', text: 'hello again' })).toBe('Echo: hello again');
    expect(await answerTo({ chat: 'group', chatId: 'wrTEAM', userId: 'mei.wang', text: '@DeerFlow in the group' })).toBe('Echo: @DeerFlow in the group');
    const { body } = await api('GET', '/api/channels/connections', key);
    expect(body?.connections).toEqual([expect.objectContaining({ provider: 'wecom', status: 'connected', external_account_id: 'mei.wang', workspace_id: wecom.botId })]);
  });
});
