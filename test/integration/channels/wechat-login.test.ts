import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { wechatChannel } from '../../../channels/wechat/index.js';
import { AUTH_FILE } from '../../../channels/wechat/login.js';
import { WECHAT_TEXTS } from '../../../channels/wechat/texts.js';
import { createLogger } from '../../../src/logger.js';
import { FakeWeChat } from '../../fakes/wechat/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/**
 * The QR-code login (`qrcode_login_enabled`, no `bot_token`): the link is logged, the confirmed
 * token is kept in `state_dir/wechat-auth.json` with mode 0600 and used on the next start without
 * a new scan, and an expired session forgets it.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wechat-state-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startWeChat(fake: FakeWeChat, dir: string) {
  const intake = new RecordingIntake();
  const logs: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void logs.push(line) } });
  const config = wechatChannel.configSchema.parse({
    enabled: true,
    qrcode_login_enabled: true,
    state_dir: dir,
    base_url: fake.baseUrl,
    cdn_base_url: fake.cdnBaseUrl,
    polling_timeout: 0.2,
    polling_retry_delay: 0.05,
    qrcode_poll_interval: 0.05,
  });
  const adapter = await wechatChannel.create(config, testChannelDeps({ intake, commands: [], logger }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  return { adapter, intake, logs };
}

const qrRequests = (fake: FakeWeChat) => fake.calls.filter((c) => c.path === '/ilink/bot/get_bot_qrcode').length;

describe('WeChat QR-code login', () => {
  it('logs the QR link, polls until confirmed, keeps the token with mode 0600, and reuses it on the next start', async () => {
    const fake = new FakeWeChat({ longPollHoldMs: 200 });
    await fake.start();
    cleanups.push(() => fake.stop());
    const dir = stateDir();
    const first = await startWeChat(fake, dir);
    expect(first.adapter.status()).toEqual({ running: false, reason: WECHAT_TEXTS.waitingForLogin });
    const code = await fake.waitFor(() => fake.qrCode);
    await fake.waitFor(() => first.logs.some((line) => line.includes(code)) || undefined);
    fake.confirmQrLogin();
    await fake.waitFor(() => first.adapter.status().running || undefined);
    const sent = fake.sendUserMessage({ userId: 'alice@im.wechat', text: 'hi after login' });
    await first.intake.waitUntil(() => first.intake.committed.some((m) => m.messageId === sent.messageId));
    const authPath = join(dir, AUTH_FILE);
    expect(statSync(authPath).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(authPath, 'utf8'))).toMatchObject({ bot_token: fake.token, ilink_bot_id: fake.botId });
    expect(first.logs.join('\n')).not.toContain(fake.token);
    await first.adapter.stop();

    const second = await startWeChat(fake, dir);
    await fake.waitFor(() => second.adapter.status().running || undefined);
    expect(qrRequests(fake)).toBe(1);
  });

  it('tightens a stored login readable by others, and forgets it when the session expires', async () => {
    const fake = new FakeWeChat({ longPollHoldMs: 200 });
    await fake.start();
    cleanups.push(() => fake.stop());
    const dir = stateDir();
    const authPath = join(dir, AUTH_FILE);
    writeFileSync(authPath, JSON.stringify({ bot_token: fake.token }), { mode: 0o644 });
    const started = await startWeChat(fake, dir);
    await fake.waitFor(() => started.adapter.status().running || undefined);
    expect(statSync(authPath).mode & 0o777).toBe(0o600);
    expect(qrRequests(fake)).toBe(0);
    fake.expireToken();
    await fake.waitFor(() => started.adapter.status().reason === WECHAT_TEXTS.sessionExpired || undefined);
    expect(() => statSync(authPath)).toThrow();
  });
});
