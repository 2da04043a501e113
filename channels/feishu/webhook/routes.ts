import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { logMalformedEvent } from '../../../src/channel/malformed-event.js';
import type { Logger } from '../../../src/logger.js';
import { feishuCallbackSchema } from '../schemas.js';
import { verifyFeishuCallback } from './verify.js';

export interface FeishuRoutesOptions {
  encryptKey: string;
  verificationToken?: string;
  now: () => number;
  windowMs: number;
  /**
   * Hands a verified `im.message.receive_v1` event (flattened, not yet shape-checked) and when
   * Feishu sent it (the header's `create_time`) to ingress: `taken`, `refused` (the intake has no
   * room and Feishu will push it again) or `stopped` (not running). Never rejects.
   */
  dispatch: (event: unknown, sentAt: number | undefined) => Promise<'taken' | 'refused' | 'stopped'>;
  /** Gets the warning for a verified callback of the wrong shape. */
  logger: Logger;
}

const headersSchema = z.object({
  'x-lark-request-timestamp': z.string().optional(),
  'x-lark-request-nonce': z.string().optional(),
  'x-lark-signature': z.string().optional(),
});
const UNAUTHORIZED = { code: 'UNAUTHORIZED', message: 'invalid Feishu callback' } as const;

/**
 * `POST /` (mounted at `/api/webhooks/feishu`): event callbacks. The raw body is kept for the
 * signature; a missing or bad signature, a timestamp outside ±5 min, a body that does not decrypt
 * or a wrong verification token gets 401 and runs nothing. `url_verification` is answered with
 * its challenge (also unsigned, when it decrypts under the encrypt key: see `verify.ts`). `im.message.receive_v1` is answered 200 at once and handed to ingress (which
 * drops replayed event ids and, with a warning, events of the wrong shape); other event types are
 * answered 200 and ignored, and so is a verified callback without a well-formed header and event
 * (one warning). 503 while stopped, and for a message the intake has no room for while Feishu
 * will push it again.
 */
export function createFeishuRoutes(options: FeishuRoutesOptions): FastifyPluginAsync {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      done(null, body);
    });
    app.post('/', async (request, reply) => {
      const headers = headersSchema.parse(request.headers);
      const verified = verifyFeishuCallback({
        rawBody: typeof request.body === 'string' ? request.body : '',
        timestamp: headers['x-lark-request-timestamp'],
        nonce: headers['x-lark-request-nonce'],
        signature: headers['x-lark-signature'],
        encryptKey: options.encryptKey,
        ...(options.verificationToken === undefined ? {} : { verificationToken: options.verificationToken }),
        nowMs: options.now(),
        windowMs: options.windowMs,
      });
      if (!verified.isValid) {
        request.log.info({ reason: verified.reason }, 'Feishu callback refused');
        return reply.code(401).send(UNAUTHORIZED);
      }
      const { body } = verified;
      if (body.type === 'url_verification' && typeof body.challenge === 'string') return reply.code(200).send({ challenge: body.challenge });
      const event = feishuCallbackSchema.safeParse(body);
      if (!event.success) {
        // Signed and decrypted, so Feishu sent it: a 4xx would only make it retry.
        logMalformedEvent(options.logger, 'feishu', 'callback', event.error);
        return reply.code(200).send({});
      }
      if (event.data.header.event_type !== 'im.message.receive_v1') return reply.code(200).send({});
      const flattened = { ...event.data.event, event_id: event.data.header.event_id, token: event.data.header.token };
      const sentAt = Number(event.data.header.create_time);
      const dispatched = await options.dispatch(flattened, Number.isFinite(sentAt) && sentAt > 0 ? sentAt : undefined);
      if (dispatched === 'stopped') return reply.code(503).send({ code: 'CHANNEL_UNAVAILABLE', message: 'Feishu channel is not running' });
      if (dispatched === 'refused') return reply.code(503).send({ code: 'INBOUND_QUEUE_FULL', message: 'the server is too busy; Feishu sends the event again' });
      return reply.code(200).send({});
    });
  };
}
