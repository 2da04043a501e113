import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { Webhooks } from '@octokit/webhooks';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type GitHubConfig, githubConfigSchema } from '../../../channels/github/config.js';
import { type DispatchSummary, GITHUB_WEBHOOK_BODY_LIMIT_BYTES, githubWebhookRoutes } from '../../../channels/github/webhook.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { WebhookDeliveriesRepo } from '../../../src/db/repos/webhook-deliveries-repo.js';
import { createLogger } from '../../../src/logger.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';
import { buildTestApp, type LogLines } from '../../unit/gateway/stub-runtime.js';

/**
 * `POST /api/webhooks/github` through `buildApp` (mounted as a channel route), on a real database,
 * with real payloads from `@octokit/webhooks-examples` signed as GitHub signs them.
 */

interface ExampleGroup {
  name: string;
  examples: Record<string, unknown>[];
}
const EXAMPLES = createRequire(import.meta.url)('@octokit/webhooks-examples') as ExampleGroup[];

function example(event: string, action?: string): Record<string, unknown> {
  const examples = EXAMPLES.find((group) => group.name === event)?.examples ?? [];
  const found = action === undefined ? examples[0] : examples.find((e) => e.action === action);
  if (!found) throw new Error(`no @octokit/webhooks-examples payload for ${event}${action ? `.${action}` : ''}`);
  return found;
}

const SECRET = 'It’s a Secret to Everybody';
const URL_PATH = '/api/webhooks/github';
const SUMMARY: DispatchSummary = { matched_agents: ['reviewer'], fired_agents: ['reviewer'], skipped: [] };
const NO_TARGET: DispatchSummary = { matched_agents: [], fired_agents: [], skipped: [{ reason: 'no_target' }] };
const signer = new Webhooks({ secret: SECRET });

interface DispatchCall {
  event: string;
  deliveryId: string | undefined;
  payload: Record<string, unknown>;
}

/** What the fan-out would do; tests swap `next` to make it throw. */
class RecordingDispatch {
  readonly calls: DispatchCall[] = [];
  next: (call: DispatchCall) => DispatchSummary = (call) => (call.event === 'ping' ? NO_TARGET : SUMMARY);

  readonly dispatch = async (event: string, deliveryId: string | undefined, payload: Record<string, unknown>) => {
    const call = { event, deliveryId, payload };
    this.calls.push(call);
    return this.next(call);
  };
}

describe.each(testDatabaseKinds())('GitHub webhook route on %s', (kind) => {
  let database: DatabaseHandle;
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database.close());
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  async function setup(config: Partial<Record<keyof GitHubConfig, unknown>> = { webhook_secret: SECRET }, options: { isEnabled?: () => boolean } = {}) {
    const recorder = new RecordingDispatch();
    const logs: LogLines = [];
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk, _encoding, callback) {
          logs.push(JSON.parse(String(chunk)));
          callback();
        },
      }),
    });
    const deliveries = new WebhookDeliveriesRepo(database.db).forPlatform('github');
    const routes = githubWebhookRoutes({
      config: githubConfigSchema.parse({ enabled: true, ...config }),
      deliveries,
      dispatch: recorder.dispatch,
      isEnabled: options.isEnabled ?? (() => true),
      logger,
    });
    const { app, logs: appLogs } = await buildTestApp({ channelRoutes: [{ name: 'github', routes }] });
    apps.push(app);
    return { app, recorder, logs, appLogs, deliveries };
  }

  interface PostOptions {
    event?: string | null;
    delivery?: string | null;
    signature?: string | null;
    body?: string | Buffer;
  }

  /** Posts `payload` as GitHub does: JSON body, event, delivery id, signature over the exact bytes. */
  async function post(app: FastifyInstance, event: string, payload: unknown, options: PostOptions = {}) {
    const body = options.body ?? JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/044aadd' };
    const eventHeader = options.event === undefined ? event : options.event;
    if (eventHeader !== null) headers['x-github-event'] = eventHeader;
    const delivery = options.delivery === undefined ? randomUUID() : options.delivery;
    if (delivery !== null) headers['x-github-delivery'] = delivery;
    const signature = options.signature === undefined ? await signer.sign(String(body)) : options.signature;
    if (signature !== null) headers['x-hub-signature-256'] = signature;
    const response = await app.inject({ method: 'POST', url: URL_PATH, headers, payload: body });
    return { response, delivery };
  }

  it('dispatches a signed delivery once, with the parsed payload, and answers its summary', async () => {
    const { app, recorder } = await setup();
    const payload = example('issue_comment', 'created');
    const { response, delivery } = await post(app, 'issue_comment', payload);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, event: 'issue_comment', delivery, handled: true, dispatch: SUMMARY });
    expect(recorder.calls).toEqual([{ event: 'issue_comment', deliveryId: delivery, payload }]);
  });

  it.each([
    ['issues', 'edited'],
    ['pull_request', 'opened'],
    ['pull_request_review', 'submitted'],
    ['pull_request_review_comment', 'created'],
  ])('dispatches a real %s.%s delivery', async (event, action) => {
    const { app, recorder } = await setup();
    const { response } = await post(app, event, example(event, action));
    expect(response.json()).toMatchObject({ ok: true, event, handled: true, dispatch: SUMMARY });
    expect(recorder.calls.map((call) => [call.event, call.payload.action])).toEqual([[event, action]]);
  });

  it('dispatches ping; the fan-out decides it has no target', async () => {
    const { app, recorder } = await setup();
    const { response } = await post(app, 'ping', example('ping'));
    expect(response.json()).toMatchObject({ handled: true, dispatch: NO_TARGET });
    expect(recorder.calls).toHaveLength(1);
  });

  const body = JSON.stringify(example('issues', 'edited'));
  const validHex = async () => (await signer.sign(body)).slice('sha256='.length);
  it.each<[string, () => Promise<string | null>]>([
    ['missing', async () => null],
    ['empty', async () => ''],
    ['signed with another secret', async () => new Webhooks({ secret: 'other' }).sign(body)],
    ['sha1= prefix', async () => `sha1=${await validHex()}`],
    ['no prefix', validHex],
    ['non-hex digits', async () => `sha256=${'z'.repeat(64)}`],
    ['upper-case hex', async () => `sha256=${(await validHex()).toUpperCase()}`],
    ['truncated', async () => (await signer.sign(body)).slice(0, -2)],
    ['over different bytes', async () => signer.sign(`${body} `)],
  ])('answers 401 and dispatches nothing for a signature that is %s', async (_name, signature) => {
    const { app, recorder, logs } = await setup();
    const { response } = await post(app, 'issues', undefined, { body, signature: await signature() });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ code: 'UNAUTHORIZED', message: 'Invalid or missing X-Hub-Signature-256' });
    expect(recorder.calls).toEqual([]);
    expect(JSON.stringify(logs)).not.toContain('sha256=');
  });

  it('checks the signature before the event header', async () => {
    const { app } = await setup();
    const { response } = await post(app, 'issues', {}, { event: null, signature: 'sha256=00' });
    expect(response.statusCode).toBe(401);
  });

  it('answers 400 for a signed delivery without X-GitHub-Event', async () => {
    const { app, recorder } = await setup();
    const { response } = await post(app, 'issues', example('issues', 'edited'), { event: null });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'BAD_REQUEST', message: 'Missing X-GitHub-Event header' });
    expect(recorder.calls).toEqual([]);
  });

  it.each([
    ['not JSON', '{"action": "opened",'],
    ['a JSON array', '[1, 2]'],
    ['a JSON string', '"opened"'],
  ])('answers 400 for a signed body that is %s', async (_name, text) => {
    const { app, recorder } = await setup();
    const { response } = await post(app, 'issues', undefined, { body: text });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'BAD_REQUEST', message: 'Invalid JSON body' });
    expect(recorder.calls).toEqual([]);
  });

  it('acknowledges an unknown event without dispatching it', async () => {
    const { app, recorder } = await setup();
    const { response, delivery } = await post(app, 'star', example('star', 'created'));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, event: 'star', delivery, handled: false, dispatch: null });
    expect(recorder.calls).toEqual([]);
  });

  it('answers 503 with the configuration hint when no secret is set and unverified mode is off', async () => {
    const { app, recorder } = await setup({ webhook_secret: '   ' });
    const { response } = await post(app, 'issues', example('issues', 'edited'));
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      code: 'CHANNEL_UNAVAILABLE',
      message:
        'Webhook signature verification not configured. Set channels.github.webhook_secret or channels.github.allow_unverified: true for unverified dev mode.',
    });
    expect(recorder.calls).toEqual([]);
  });

  it('accepts unsigned deliveries with a warning when allow_unverified is set, an empty body as {}', async () => {
    const { app, recorder, logs } = await setup({ allow_unverified: true });
    const { response } = await post(app, 'issues', example('issues', 'edited'), { signature: null });
    expect(response.statusCode).toBe(200);
    const empty = await post(app, 'ping', undefined, { body: '', signature: null });
    expect(empty.response.json()).toMatchObject({ handled: true, dispatch: NO_TARGET });
    expect(recorder.calls.map((call) => call.payload)).toEqual([example('issues', 'edited'), {}]);
    expect(logs.filter((line) => line.level === 40 && String(line.msg).includes('WITHOUT signature verification'))).toHaveLength(2);
  });

  it('answers 413 for a body over 25 MB, before anything else', async () => {
    const { app, recorder } = await setup();
    const { response } = await post(app, 'issues', undefined, {
      body: Buffer.alloc(GITHUB_WEBHOOK_BODY_LIMIT_BYTES + 1, 0x20),
      signature: 'sha256=00',
    });
    expect(response.statusCode).toBe(413);
    expect(recorder.calls).toEqual([]);
  });

  it('accepts a body of just under 25 MB', async () => {
    const { app, recorder } = await setup();
    const payload = { ...example('issues', 'edited'), padding: 'x'.repeat(GITHUB_WEBHOOK_BODY_LIMIT_BYTES - 100_000) };
    const { response } = await post(app, 'issues', payload);
    expect(response.statusCode).toBe(200);
    expect(recorder.calls).toHaveLength(1);
  });

  it('answers a redelivery of a finished delivery with the stored summary, without dispatching again', async () => {
    const { app, recorder } = await setup();
    const payload = example('pull_request', 'opened');
    const first = await post(app, 'pull_request', payload);
    const again = await post(app, 'pull_request', payload, { delivery: first.delivery });
    expect(again.response.statusCode).toBe(200);
    expect(again.response.json()).toEqual({
      ok: true,
      event: 'pull_request',
      delivery: first.delivery,
      handled: true,
      dispatch: SUMMARY,
      duplicate: true,
    });
    expect(recorder.calls).toHaveLength(1);
  });

  it('answers a delivery that is in progress elsewhere with dispatch null', async () => {
    const { app, recorder, deliveries } = await setup();
    const delivery = randomUUID();
    await deliveries.begin(delivery, 'issues');
    const { response } = await post(app, 'issues', example('issues', 'edited'), { delivery });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true, event: 'issues', delivery, handled: true, dispatch: null, duplicate: true });
    expect(recorder.calls).toEqual([]);
  });

  it('answers 503 naming the delivery and error class when the fan-out throws, then runs the redelivery', async () => {
    const { app, recorder, logs, appLogs } = await setup();
    const payload = example('issue_comment', 'created');
    const secretText = String((payload.comment as { body: string }).body);
    class RegistryUnavailableError extends Error {
      override name = 'RegistryUnavailableError';
    }
    recorder.next = () => {
      throw new RegistryUnavailableError(`could not route comment ${secretText}`);
    };
    const failed = await post(app, 'issue_comment', payload);
    expect(failed.response.statusCode).toBe(503);
    expect(failed.response.json()).toEqual({
      code: 'CHANNEL_UNAVAILABLE',
      message: `fan-out failed for delivery '${failed.delivery}': RegistryUnavailableError`,
    });
    expect(JSON.stringify([logs, appLogs])).not.toContain(secretText);

    recorder.next = () => SUMMARY;
    const redelivered = await post(app, 'issue_comment', payload, { delivery: failed.delivery });
    expect(redelivered.response.json()).toMatchObject({ handled: true, dispatch: SUMMARY });
    expect(redelivered.response.json()).not.toHaveProperty('duplicate');
    expect(recorder.calls).toHaveLength(2);
  });

  it('dispatches a delivery without X-GitHub-Delivery, with nothing to dedupe on', async () => {
    const { app, recorder } = await setup();
    const payload = example('issues', 'edited');
    const { response } = await post(app, 'issues', payload, { delivery: null });
    await post(app, 'issues', payload, { delivery: null });
    expect(response.json()).toMatchObject({ delivery: null, handled: true });
    expect(recorder.calls.map((call) => call.deliveryId)).toEqual([undefined, undefined]);
  });

  it('skips deliveries while the kill switch is off, and runs the same delivery once it is on', async () => {
    let isEnabled = false;
    const { app, recorder } = await setup(undefined, { isEnabled: () => isEnabled });
    const payload = example('issues', 'edited');
    const { response, delivery } = await post(app, 'issues', payload);
    expect(response.json()).toEqual({ ok: true, event: 'issues', delivery, handled: true, dispatch: { skipped: 'channel_disabled' } });
    expect(recorder.calls).toEqual([]);
    isEnabled = true;
    const again = await post(app, 'issues', payload, { delivery });
    expect(again.response.json()).toMatchObject({ dispatch: SUMMARY });
    expect(recorder.calls).toHaveLength(1);
  });

  it('logs ids and outcomes, never payload text, the signature or the secret', async () => {
    const { app, logs, appLogs } = await setup();
    const payload = example('issue_comment', 'created');
    const { delivery } = await post(app, 'issue_comment', payload);
    const text = JSON.stringify([logs, appLogs]);
    expect(text).toContain(delivery);
    expect(text).not.toContain(String((payload.comment as { body: string }).body));
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('sha256=');
  });

  it('keeps its raw-body parser inside its own context', async () => {
    const { app } = await setup();
    const response = await app.inject({ method: 'POST', url: '/api/threads', headers: { 'content-type': 'application/octet-stream' }, payload: 'x' });
    expect(response.statusCode).toBe(415);
  });
});
