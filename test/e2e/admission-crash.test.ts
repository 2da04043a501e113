import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

const CARD_CREATE = '/v1.0/card/instances/createAndDeliver';

/**
 * Issue #15: the embedded server killed (-9) while it admits a message: the message is claimed
 * and its acknowledgement is on its way, nothing is committed yet. DingTalk was never told the
 * message arrived, so it sends it again to the next start; that start must run it rather than
 * take the dead process's claim for a delivery still in progress. Talked to only as DingTalk does.
 */
describe('a crash while a message is being admitted', () => {
  let dingtalk: FakeDingTalk;
  let model: FakeOpenAI;
  let config: { path: string; dir: string };
  let server: ServerProcess | undefined;
  const asked: string[] = [];

  beforeAll(async () => {
    dingtalk = new FakeDingTalk();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    model.respond = (request) => {
      const question = lastUserText(request.messages);
      asked.push(question);
      return { text: `Answer to: ${question}` };
    };
    await Promise.all([dingtalk.start(), model.start()]);
    config = writeConfig(`server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  dingtalk: { enabled: true, client_id: "${dingtalk.clientId}", client_secret: "${dingtalk.clientSecret}", api_url: "${dingtalk.apiUrl}", card_template_id: "e2e-template.schema" }
`);
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await Promise.all([dingtalk?.stop(), model?.stop()]);
  });

  const start = async (connection: number): Promise<ServerProcess> => {
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await dingtalk.waitFor(() => dingtalk.connectionsOpened === connection, 30_000);
    return server;
  };

  it('answers the message DingTalk sends again after the restart, once', async () => {
    const first = await start(1);
    // The acknowledgement card never comes back: the process dies holding the claim.
    dingtalk.failNext(CARD_CREATE, { kind: 'hang' });
    const question = await dingtalk.sendUserMessage({ chat: 'private', userId: 'staffcrash1', text: 'Are you still there?' });
    await dingtalk.waitFor(() => dingtalk.calls.some((call) => call.path === CARD_CREATE), 20_000);
    first.child.kill('SIGKILL');
    await first.stop();
    expect(dingtalk.isAcked(question.streamMessageId)).toBe(false);

    await start(2);
    const card = await dingtalk.waitFor(
      () => dingtalk.botMessages('staffcrash1').find((m) => m.kind === 'card' && m.isFinalized && m.text === 'Answer to: Are you still there?'),
      30_000,
    );
    expect(card).toBeDefined();
    await dingtalk.waitFor(() => dingtalk.isAcked(question.streamMessageId), 10_000);
    expect(dingtalk.deliveriesOf(question.streamMessageId)).toHaveLength(2);
    expect(asked).toEqual(['Are you still there?']);
    expect(dingtalk.botMessages('staffcrash1')).toHaveLength(1);
  });
});
