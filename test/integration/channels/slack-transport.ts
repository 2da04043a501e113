import { slackChannel } from '../../../channels/slack/index.js';
import type { InboundIntake } from '../../../src/channel/types.js';
import type { Logger } from '../../../src/logger.js';
import { FakeSlack, type FakeSlackOptions } from '../../fakes/slack/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { serveWebhookRoutes } from '../../helpers/webhook-server.js';

/**
 * A started Slack adapter on a fresh fake Slack, taking events over HTTP (its route served as core
 * serves it, the fake posting to it) or Socket Mode. What it opened goes on `cleanups`, to be
 * undone in reverse order.
 */
export async function startSlackOn(
  mode: 'http' | 'socket',
  options: { intake: InboundIntake; logger: Logger; fake?: FakeSlackOptions; cleanups: (() => Promise<void>)[] },
): Promise<FakeSlack> {
  const { cleanups } = options;
  const fake = new FakeSlack(options.fake);
  await fake.start();
  cleanups.push(() => fake.stop());
  const transport = mode === 'http' ? { signing_secret: fake.signingSecret } : { app_token: fake.appToken };
  const config = slackChannel.configSchema.parse({ enabled: true, bot_token: fake.botToken, api_url: fake.apiUrl, ...transport });
  const adapter = await slackChannel.create(config, testChannelDeps({ intake: options.intake, commands: [], logger: options.logger }));
  cleanups.push(() => adapter.stop());
  if (mode === 'http') {
    if (!adapter.routes) throw new Error('HTTP mode must have routes');
    const server = await serveWebhookRoutes('slack', adapter.routes);
    cleanups.push(server.close);
    fake.eventsUrl = server.url;
  }
  await adapter.start();
  return fake;
}
