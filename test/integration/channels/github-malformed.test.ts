import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Webhooks } from '@octokit/webhooks';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { GITHUB_EVENTS } from '../../../channels/github/bindings.js';
import { githubConfigSchema } from '../../../channels/github/config.js';
import { type DispatchSummary, githubWebhookRoutes } from '../../../channels/github/webhook.js';
import { MemoryWebhookDeliveries } from '../../helpers/channel-deps.js';
import { CapturedLogs, MALFORMED_EVENT_WARNING } from './malformed-events.js';

/**
 * Signed GitHub deliveries whose payload has the wrong shape for their event: answered 200 with
 * `dispatch: {skipped: 'malformed_payload'}` (a redelivery would not fix them), one warning by
 * path, never fanned out, no error line. Every real payload of `@octokit/webhooks-examples` for
 * the events we handle still passes.
 */

const SECRET = 'malformed-secret';
const SECRET_TEXT = 'do-not-log-this-text';
const signer = new Webhooks({ secret: SECRET });
const SUMMARY: DispatchSummary = { matched_agents: [], fired_agents: [], skipped: [] };
const EXAMPLES = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: Record<string, unknown>[] }[];

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function setup() {
  const logs = new CapturedLogs();
  const dispatched: string[] = [];
  const app = Fastify();
  await app.register(
    githubWebhookRoutes({
      config: githubConfigSchema.parse({ enabled: true, webhook_secret: SECRET }),
      deliveries: new MemoryWebhookDeliveries(),
      dispatch: async (event) => {
        dispatched.push(event);
        return SUMMARY;
      },
      isEnabled: () => true,
      logger: logs.logger,
    }),
  );
  apps.push(app);
  const post = async (event: string, payload: unknown) => {
    const body = JSON.stringify(payload);
    const headers = { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': randomUUID(), 'x-hub-signature-256': await signer.sign(body) };
    return app.inject({ method: 'POST', url: '/', headers, payload: body });
  };
  return { logs, dispatched, post };
}

const example = (event: string) => EXAMPLES.find((group) => group.name === event)?.examples[0] as Record<string, unknown>;
const issue = example('issue_comment');

const MALFORMED: Array<[string, string, Record<string, unknown>]> = [
  ['issues without issue', 'issues', { ...example('issues'), issue: undefined }],
  ['issues with issue a string', 'issues', { ...example('issues'), issue: SECRET_TEXT }],
  ['issue.number a string', 'issues', { ...example('issues'), issue: { ...(example('issues').issue as object), number: '7' } }],
  ['repository null', 'issue_comment', { ...issue, repository: null }],
  ['repository.full_name a number', 'issue_comment', { ...issue, repository: { full_name: 5 } }],
  ['comment.body a number', 'issue_comment', { ...issue, comment: { ...(issue.comment as object), body: 12 } }],
  ['sender a string', 'issue_comment', { ...issue, sender: SECRET_TEXT }],
  ['pull_request an array', 'pull_request', { ...example('pull_request'), pull_request: [SECRET_TEXT] }],
  ['review.body an object', 'pull_request_review', { ...example('pull_request_review'), review: { id: 1, body: { text: SECRET_TEXT } } }],
  ['action a number', 'pull_request_review_comment', { ...example('pull_request_review_comment'), action: 1 }],
];

describe('GitHub malformed payloads', () => {
  it('answers each 200 as malformed_payload, warns once by path, dispatches nothing and logs no error', async () => {
    const { logs, dispatched, post } = await setup();
    for (const [, event, payload] of MALFORMED) {
      const response = await post(event, payload);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ ok: true, event, handled: true, dispatch: { skipped: 'malformed_payload' } });
    }
    expect(dispatched).toEqual([]);
    const warnings = logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING);
    expect(warnings).toHaveLength(MALFORMED.length);
    expect(warnings.every((line) => line.platform === 'github' && Array.isArray(line.issues))).toBe(true);
    expect(logs.errors()).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_TEXT);
    // The next genuine delivery is dispatched.
    expect((await post('issues', example('issues'))).json()).toMatchObject({ dispatch: SUMMARY });
    expect(dispatched).toEqual(['issues']);
  });

  it('lets every real example payload of the handled events through', async () => {
    const { logs, dispatched, post } = await setup();
    const real = EXAMPLES.filter((group) => (GITHUB_EVENTS as readonly string[]).includes(group.name)).flatMap((group) =>
      group.examples.map((payload) => [group.name, payload] as const),
    );
    expect(real.length).toBeGreaterThan(20);
    for (const [event, payload] of real) await post(event, payload);
    expect(logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING)).toEqual([]);
    expect(dispatched).toHaveLength(real.length);
  });
});
