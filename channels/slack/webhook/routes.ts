import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { checkSlackHeaders, verifySlackSignature } from './verify.js';

/**
 * Hands a verified Events API body to ingress: `taken`, `refused` (the intake has no room and
 * Slack will retry) or `stopped` (ingress is not running; Slack retries later). Never rejects.
 */
export type EventDispatcher = (body: unknown, retry: { retryNum?: number; retryReason?: string }) => Promise<'taken' | 'refused' | 'stopped'>;

export interface SlackRoutesOptions {
  signingSecret: string;
  now: () => number;
  dispatch: EventDispatcher;
}

const headersSchema = z.object({
  'x-slack-signature': z.string().optional(),
  'x-slack-request-timestamp': z.string().optional(),
  'x-slack-retry-num': z.string().regex(/^\d+$/).optional(),
  'x-slack-retry-reason': z.string().optional(),
});
const urlVerificationSchema = z.object({ type: z.literal('url_verification'), challenge: z.string() });

const UNAUTHORIZED = { code: 'UNAUTHORIZED', message: 'invalid Slack signature' } as const;

/**
 * `POST /` (mounted at `/api/webhooks/slack`): the HTTP Events API. The raw body is kept for the
 * signature; a bad, missing or stale (> 5 min) signature gets 401 and changes nothing;
 * `url_verification` is answered with its challenge; every other verified body (a malformed one
 * too: ingress drops it with a warning, and Slack must not retry it) is answered 200 once
 * dispatched, which only hands it on (Slack waits 3 s at most,
 * https://docs.slack.dev/apis/events-api), retries (`X-Slack-Retry-Num`) included: ingress
 * dedupes them. 503 while ingress is stopped, and for a message the intake has no room for before
 * Slack's last retry, so Slack sends it again later.
 */
export function createSlackRoutes(options: SlackRoutesOptions): FastifyPluginAsync {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(['application/json', 'application/x-www-form-urlencoded'], { parseAs: 'string' }, (_req, body, done) => {
      done(null, body);
    });
    // Unsigned or stale requests are answered from their headers, before the body is read, and
    // the connection closed: nobody without the signing secret gets the server to buffer a byte.
    const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
      const signature = request.headers['x-slack-signature'];
      const timestamp = request.headers['x-slack-request-timestamp'];
      const checked = checkSlackHeaders({
        signature: typeof signature === 'string' ? signature : undefined,
        timestamp: typeof timestamp === 'string' ? timestamp : undefined,
        nowMs: options.now(),
      });
      if (checked.isValid) return;
      request.log.info({ reason: checked.reason }, 'Slack webhook refused before reading');
      return reply.code(401).header('connection', 'close').send(UNAUTHORIZED);
    };
    app.post('/', { onRequest }, async (request, reply) => {
      const headers = headersSchema.parse(request.headers);
      const rawBody = typeof request.body === 'string' ? request.body : '';
      const verified = verifySlackSignature({
        signingSecret: options.signingSecret,
        rawBody,
        signature: headers['x-slack-signature'],
        timestamp: headers['x-slack-request-timestamp'],
        nowMs: options.now(),
      });
      if (!verified.isValid) {
        request.log.info({ reason: verified.reason }, 'Slack webhook refused');
        return reply.code(401).send(UNAUTHORIZED);
      }
      const body = parseBody(rawBody, request.headers['content-type']);
      const challenge = urlVerificationSchema.safeParse(body);
      if (challenge.success) return reply.code(200).send({ challenge: challenge.data.challenge });
      const retryNum = headers['x-slack-retry-num'] === undefined ? undefined : Number(headers['x-slack-retry-num']);
      const dispatched = await options.dispatch(body, {
        ...(retryNum === undefined ? {} : { retryNum }),
        ...(headers['x-slack-retry-reason'] === undefined ? {} : { retryReason: headers['x-slack-retry-reason'] }),
      });
      if (dispatched === 'stopped') return reply.code(503).send({ code: 'CHANNEL_UNAVAILABLE', message: 'Slack channel is not running' });
      if (dispatched === 'refused') return reply.code(503).send({ code: 'INBOUND_QUEUE_FULL', message: 'the server is too busy; Slack sends the event again' });
      return reply.code(200).send();
    });
  };
}

/** JSON (Events API), or a form whose `payload` field is JSON (interactivity); undefined when neither parses. */
function parseBody(rawBody: string, contentType: string | undefined): unknown {
  try {
    if (contentType?.includes('application/x-www-form-urlencoded')) {
      const payload = new URLSearchParams(rawBody).get('payload');
      return payload === null ? {} : JSON.parse(payload);
    }
    return JSON.parse(rawBody);
  } catch {
    return undefined;
  }
}
