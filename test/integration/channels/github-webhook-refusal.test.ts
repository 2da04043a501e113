import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Webhooks } from '@octokit/webhooks';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { githubConfigSchema } from '../../../channels/github/config.js';
import { type DispatchSummary, GITHUB_WEBHOOK_BODY_LIMIT_BYTES, githubWebhookRoutes } from '../../../channels/github/webhook.js';
import { GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT, InFlightBudget } from '../../../channels/github/webhook-gate.js';
import type { WebhookDeliveries } from '../../../src/channel/types.js';
import { createLogger } from '../../../src/logger.js';
import { Waiters } from '../../fakes/waiters.js';
import { buildTestApp, type LogLines } from '../../unit/gateway/stub-runtime.js';

/**
 * The GitHub webhook refuses what it can before it reads a body, over a real socket: an attacker
 * who announces 25 MB and sends 64 KB gets the answer at once, and the server never holds the rest.
 */

const SECRET = 'refusal-secret';
const PATH = '/api/webhooks/github';
const SUMMARY: DispatchSummary = { matched_agents: [], fired_agents: [], skipped: [] };
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/** Deliveries that never repeat: the refusals under test never reach them. */
const deliveries: WebhookDeliveries = {
  async begin() {
    return { kind: 'new' };
  },
  async finish() {},
  async fail() {},
} as unknown as WebhookDeliveries;

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function listen(config: Record<string, unknown> = { webhook_secret: SECRET }, budgets: { smallBodies?: InFlightBudget; largeBodies?: InFlightBudget } = {}) {
  const logs: LogLines = [];
  const waiters = new Waiters('github webhook logs');
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk, _encoding, callback) {
        logs.push(JSON.parse(String(chunk)));
        waiters.notify();
        callback();
      },
    }),
  });
  const dispatched: string[] = [];
  const routes = githubWebhookRoutes({
    config: githubConfigSchema.parse({ enabled: true, ...config }),
    deliveries,
    dispatch: async (event) => {
      dispatched.push(event);
      return SUMMARY;
    },
    isEnabled: () => true,
    logger,
    ...budgets,
  });
  const { app, logs: appLogs } = await buildTestApp({ channelRoutes: [{ name: 'github', routes }] });
  apps.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: (app.server.address() as AddressInfo).port, dispatched, logs, appLogs, waiters };
}

interface Partial {
  status: number;
  body: string;
  /** Body bytes the client had written when the answer arrived. */
  sentBytes: number;
  connection: string | undefined;
  retryAfter: string | undefined;
}

/**
 * Announces `contentLength` bytes, writes one 64 KB chunk and waits for the answer without writing
 * more; then drops the connection.
 */
function postPartially(port: number, headers: Record<string, string>, contentLength = GITHUB_WEBHOOK_BODY_LIMIT_BYTES - 100): Promise<Partial> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    const req = request(
      { host: '127.0.0.1', port, path: PATH, method: 'POST', headers: { ...headers, 'content-length': String(contentLength) } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          body += text;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body, sentBytes, connection: res.headers.connection, retryAfter: res.headers['retry-after'] });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.write(CHUNK, () => {
      sentBytes += CHUNK.length;
    });
  });
}

const GITHUB_HEADERS = { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': 'd-1' };
const SIGNATURE = `sha256=${'a'.repeat(64)}`;

describe('GitHub webhook refuses before reading the body', () => {
  it.each<[string, Record<string, string>, number, string]>([
    ['no X-Hub-Signature-256', GITHUB_HEADERS, 401, 'Invalid or missing X-Hub-Signature-256'],
    ['a malformed X-Hub-Signature-256', { ...GITHUB_HEADERS, 'x-hub-signature-256': 'sha256=00' }, 401, 'Invalid or missing X-Hub-Signature-256'],
    ['no X-GitHub-Event', { 'content-type': 'application/json', 'x-hub-signature-256': SIGNATURE }, 400, 'Missing X-GitHub-Event header'],
    ['a form-encoded body', { ...GITHUB_HEADERS, 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature-256': SIGNATURE }, 415, "Unsupported content type; send 'application/json'."],
    ['a text body', { ...GITHUB_HEADERS, 'content-type': 'text/plain', 'x-hub-signature-256': SIGNATURE }, 415, "Unsupported content type; send 'application/json'."],
  ])('answers a 25 MB post with %s after 64 KB, and closes', async (_name, headers, status, message) => {
    const { port, dispatched } = await listen();
    const answer = await postPartially(port, headers);
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toMatchObject({ message });
    expect(answer.sentBytes).toBeLessThanOrEqual(CHUNK.length);
    expect(answer.connection).toBe('close');
    expect(dispatched).toEqual([]);
  });

  it('answers 503 before reading when no secret is configured', async () => {
    const { port } = await listen({});
    const answer = await postPartially(port, { ...GITHUB_HEADERS, 'x-hub-signature-256': SIGNATURE });
    expect(answer.status).toBe(503);
    expect(answer.sentBytes).toBeLessThanOrEqual(CHUNK.length);
  });

  it('answers 413 before reading a body announced over 25 MB', async () => {
    const { port } = await listen();
    const answer = await postPartially(port, { ...GITHUB_HEADERS, 'x-hub-signature-256': SIGNATURE }, GITHUB_WEBHOOK_BODY_LIMIT_BYTES + 1);
    expect(answer.status).toBe(413);
    expect(answer.sentBytes).toBeLessThanOrEqual(CHUNK.length);
  });

  it('still answers a genuine signed delivery on the same server after refusals', async () => {
    const { port, dispatched } = await listen();
    await postPartially(port, GITHUB_HEADERS);
    const body = JSON.stringify({ action: 'opened', repository: { full_name: 'o/r' }, issue: { number: 1, title: 't', body: null, user: { login: 'a' } } });
    const signature = await new Webhooks({ secret: SECRET }).sign(body);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: PATH, method: 'POST', headers: { ...GITHUB_HEADERS, 'x-hub-signature-256': signature } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(200);
    expect(dispatched).toEqual(['issues']);
  });
});

describe('GitHub webhook limits large bodies in flight', () => {
  it('answers 503 with Retry-After while the large-body slots are taken, and reads large bodies again once one is free', async () => {
    const { port, logs, waiters } = await listen();
    const headers = { ...GITHUB_HEADERS, 'x-hub-signature-256': SIGNATURE };
    const readingLarge = () => logs.filter((line) => line.msg === 'github delivery: reading a large body').length;
    // Each announces 2 MB under a well-formed (made-up) signature, sends 64 KB and stalls: it holds a slot.
    const stalled = Array.from({ length: GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT }, () => openStalled(port, headers, 2 * 1024 * 1024));
    try {
      await waiters.waitFor(() => readingLarge() === GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT);
      const refused = await postPartially(port, headers, 2 * 1024 * 1024);
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('5');
      expect(refused.sentBytes).toBeLessThanOrEqual(CHUNK.length);
      for (const s of stalled) s.finish();
      // Read to the end, hashed, and refused: the signature was made up.
      expect(await Promise.all(stalled.map((s) => s.answer))).toEqual(stalled.map(() => 401));
      const next = openStalled(port, headers, 2 * 1024 * 1024);
      await waiters.waitFor(() => readingLarge() === GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT + 1);
      next.finish();
      expect(await next.answer).toBe(401);
    } finally {
      for (const s of stalled) s.destroy();
    }
  });
});

describe('GitHub webhook and clients that go away', () => {
  it('frees the slot of a client that drops mid-body and logs no error', async () => {
    const largeBodies = new InFlightBudget(GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT);
    const slots = new Waiters('large-body slots', { pollMs: 5 });
    const { port, logs, appLogs } = await listen(undefined, { largeBodies });
    const dropped = openStalled(port, { ...GITHUB_HEADERS, 'x-hub-signature-256': SIGNATURE }, 2 * 1024 * 1024);
    dropped.answer.catch(() => undefined);
    await slots.waitFor(() => largeBodies.inUse === 1);
    dropped.destroy();
    await slots.waitFor(() => largeBodies.inUse === 0);
    expect([...logs, ...appLogs].filter((line) => typeof line.level === 'number' && line.level >= 50)).toEqual([]);
  });
});

describe('GitHub webhook limits the bytes of small bodies in flight', () => {
  it('answers 503 once the small-body budget is spent, and reads again once it is free', async () => {
    const smallBodies = new InFlightBudget(200 * 1024);
    const budget = new Waiters('small-body budget', { pollMs: 5 });
    const { port } = await listen(undefined, { smallBodies });
    const headers = { ...GITHUB_HEADERS, 'x-hub-signature-256': SIGNATURE };
    const stalled = openStalled(port, headers, 150 * 1024);
    try {
      await budget.waitFor(() => smallBodies.inUse === 150 * 1024);
      const refused = await postPartially(port, headers, 100 * 1024);
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('5');
      stalled.finish();
      expect(await stalled.answer).toBe(401);
      await budget.waitFor(() => smallBodies.inUse === 0);
      const next = openStalled(port, headers, 100 * 1024);
      next.finish();
      expect(await next.answer).toBe(401);
    } finally {
      stalled.destroy();
    }
  });
});

/** A post that announces `contentLength` bytes and sends 64 KB; `finish()` sends the rest, `answer` is the status. */
function openStalled(port: number, headers: Record<string, string>, contentLength: number) {
  const req = request({ host: '127.0.0.1', port, path: PATH, method: 'POST', headers: { ...headers, 'content-length': String(contentLength) } });
  const answer = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(CHUNK);
  return {
    answer,
    finish: () => req.end(Buffer.alloc(contentLength - CHUNK.length, 0x20)),
    destroy: () => req.destroy(),
  };
}
