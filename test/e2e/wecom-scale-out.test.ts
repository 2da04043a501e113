import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeWeCom } from '../fakes/wecom/index.js';
import { hasScaleOutServices, type ScaledOutDeployment, startScaledOutDeployment } from '../helpers/scaled-out-deployment.js';
import { channelStarted, type ServerProcess } from './server-process.js';

/**
 * WeCom scaled out: two server processes on one PostgreSQL and one Redis (`DATABASE_URL`,
 * `REDIS_URL`). WeCom keeps one long connection per bot, so one process holds it under the
 * ingress lease; both processes' workers answer, the other's through the holder.
 */

describe.skipIf(!hasScaleOutServices)('WeCom scaled out on PostgreSQL and Redis', () => {
  let wecom: FakeWeCom;
  let deployment: ScaledOutDeployment;

  beforeAll(async () => {
    wecom = new FakeWeCom();
    deployment = await startScaledOutDeployment(wecom, () => `wecom: { enabled: true, bot_id: "${wecom.botId}", bot_secret: "${wecom.secret}", ws_url: "${wecom.wsUrl}" }`);
  });
  afterAll(() => deployment?.stop());

  it('holds one long connection for two processes, answers every message once in its stream, and hands the connection over', async () => {
    const first = await deployment.startServer();
    await first.waitForLog(channelStarted('wecom'));
    const second = await deployment.startServer();
    const health = async (server: ServerProcess) => ((await (await fetch(`${server.url}/health`)).json()) as { channels: Record<string, unknown> }).channels.wecom;
    expect(await health(first)).toEqual({ running: true });
    expect(await health(second)).toMatchObject({ running: false, standby: true });
    expect(wecom.authentications).toBe(1);

    // Both processes' workers take turns; the standby's replies go through the holder.
    const users = Array.from({ length: 8 }, (_, i) => `scale.user${i}`);
    const sent = await Promise.all(users.map((userId) => wecom.sendUserMessage({ chat: 'private', userId, text: `both ${userId}` })));
    for (const [i, userId] of users.entries()) {
      await wecom.waitFor(() => wecom.botMessages(userId).find((m) => m.isFinished && m.replyTo === sent[i]?.msgid && m.text === `Echo: both ${userId}`), 20_000);
    }
    expect(users.map((userId) => wecom.botMessages(userId).length)).toEqual(users.map(() => 1));
    expect(deployment.model.requests).toHaveLength(users.length);
    // Each turn ran in one of the two (the queue spreads them; a run seen here: 3 and 5).
    const accepted = (server: ServerProcess) => server.logs.filter((entry) => entry.msg === 'inbound accepted' && entry.channel === 'wecom').length;
    expect(accepted(first) + accepted(second)).toBe(users.length);

    // The holder shuts down and gives the lease up: the standby connects and answers.
    await first.stop();
    await second.waitForLog(channelStarted('wecom'), 15_000);
    const after = await wecom.sendUserMessage({ chat: 'private', userId: 'scale.after', text: 'still there?' });
    await wecom.waitFor(() => wecom.botMessages('scale.after').find((m) => m.isFinished && m.replyTo === after.msgid && m.text === 'Echo: still there?'), 20_000);
    expect(wecom.authentications).toBe(2);
  });
});
