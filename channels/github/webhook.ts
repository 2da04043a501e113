import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { WebhookDeliveries } from '../../src/channel/types.js';
import { errorResponses } from '../../src/gateway/error-handler.js';
import { type ZodTypeProvider, zodSerializerCompiler, zodValidatorCompiler } from '../../src/gateway/validation.js';
import type { Logger } from '../../src/logger.js';
import { isGitHubEvent } from './bindings.js';
import type { GitHubConfig } from './config.js';
import { githubPayloadSchemas } from './schemas.js';
import {
  contentLengthOf,
  GITHUB_WEBHOOK_BODY_LIMIT_BYTES,
  GITHUB_WEBHOOK_BUSY_RETRY_AFTER_SECONDS,
  GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT,
  GITHUB_WEBHOOK_LARGE_BODY_BYTES,
  GITHUB_WEBHOOK_SMALL_BODIES_IN_FLIGHT_BYTES,
  githubWebhookMessages,
  headerOf,
  InFlightBudget,
  type ReadBody,
  type Rejection,
  readSignedBody,
  refuseBeforeReading,
  rejection,
} from './webhook-gate.js';

export { GITHUB_WEBHOOK_BODY_LIMIT_BYTES, githubWebhookMessages } from './webhook-gate.js';

export const dispatchSummarySchema = z.object({
  matched_agents: z.array(z.string()),
  fired_agents: z.array(z.string()),
  skipped: z.array(z.object({ agent: z.string().optional(), reason: z.string() })),
});
/** What the fan-out did with one delivery; answered to GitHub and stored for redeliveries. */
export type DispatchSummary = z.infer<typeof dispatchSummarySchema>;

/**
 * Hands a verified delivery to the agents bound to it. It must only enqueue (GitHub gives a
 * delivery 10 s); throwing makes the route answer 503 and mark the delivery failed.
 */
export type GitHubDispatch = (event: string, deliveryId: string | undefined, payload: Record<string, unknown>) => Promise<DispatchSummary>;

const webhookReplySchema = z.object({
  ok: z.literal(true),
  event: z.string(),
  delivery: z.string().nullable(),
  handled: z.boolean(),
  dispatch: z.union([dispatchSummarySchema, z.object({ skipped: z.enum(['channel_disabled', 'malformed_payload']) }), z.null()]),
  duplicate: z.literal(true).optional(),
});
/** The 200 body of `POST /api/webhooks/github`. */
export type GitHubWebhookReply = z.infer<typeof webhookReplySchema>;

export interface GitHubWebhookDeps {
  /** `webhook_secret` is read once, when the plugin is built (a changed secret needs a restart); `allow_unverified` per request. */
  config: Pick<GitHubConfig, 'webhook_secret' | 'allow_unverified'>;
  deliveries: WebhookDeliveries;
  dispatch: GitHubDispatch;
  /** The live kill switch (`channels.github.enabled`); false → deliveries are acknowledged and skipped. */
  isEnabled: () => boolean;
  /** Gets event names, delivery ids, sizes and outcomes; never payload text, signatures or secrets. */
  logger: Logger;
  /** Bodies over 1 MB (or of unknown length) read at once, counted in bodies. Default: 4. */
  largeBodies?: InFlightBudget;
  /** Bytes of bodies up to 1 MB read at once, by `Content-Length`. Default: 64 MiB. */
  smallBodies?: InFlightBudget;
}

/** A checked request, ready for the fan-out. */
interface Delivery {
  event: string;
  deliveryId: string | undefined;
  payload: Record<string, unknown>;
}

/**
 * `POST /` for GitHub webhooks, mounted at `/api/webhooks/github` in its own context. What the
 * headers alone settle is answered before a byte of the body is read, and the connection is
 * closed (`Connection: close`) so nobody gets to stream the rest: size over
 * {@link GITHUB_WEBHOOK_BODY_LIMIT_BYTES} (413) → secret configured (503) → `X-Hub-Signature-256`
 * present and well-formed (401) → `X-GitHub-Event` (400) → `application/json` (415) → a slot for
 * a body over 1 MB or of unknown length (503 + `Retry-After` when all 4 are taken), or a share of
 * the 64 MiB budget of smaller bodies, by `Content-Length` (503 + `Retry-After` when spent). The
 * body is then hashed as it streams and the signature compared in constant time (401), then:
 * JSON (400) → known event → its payload's shape (`schemas.ts`; a malformed one is answered 200
 * `dispatch: {skipped: 'malformed_payload'}` with one warning) → kill switch → duplicate
 * `X-GitHub-Delivery` → dispatch (503 when it throws). Every accepted delivery gets 200 `{ok, event, delivery, handled, dispatch}` well within
 * GitHub's 10 s, since `dispatch` only enqueues. The gateway serves it as a public route, like
 * every webhook: GitHub authenticates with the signature, not a key.
 */
export function githubWebhookRoutes(deps: GitHubWebhookDeps): FastifyPluginAsync {
  const secret = deps.config.webhook_secret;
  const largeBodies = deps.largeBodies ?? new InFlightBudget(GITHUB_WEBHOOK_LARGE_BODIES_IN_FLIGHT);
  const smallBodies = deps.smallBodies ?? new InFlightBudget(GITHUB_WEBHOOK_SMALL_BODIES_IN_FLIGHT_BYTES);
  return async (instance) => {
    const app = instance.withTypeProvider<ZodTypeProvider>();
    // Inside this context only: the plugin works under buildApp and on a bare Fastify alike.
    app.setValidatorCompiler(zodValidatorCompiler);
    app.setSerializerCompiler(zodSerializerCompiler);
    // The signature covers the exact bytes: the body arrives as a stream, hashed as it is read.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', (request: FastifyRequest, payload: IncomingMessage): Promise<ReadBody> =>
      readSignedBody(payload, secret, headerOf(request.headers, 'x-hub-signature-256')),
    );
    app.post(
      '/',
      {
        bodyLimit: GITHUB_WEBHOOK_BODY_LIMIT_BYTES,
        schema: { response: { 200: webhookReplySchema, ...errorResponses } },
        onRequest: async (request, reply) => {
          const refused = refuseBeforeReading(request.headers, { hasSecret: secret !== undefined, allowUnverified: deps.config.allow_unverified });
          if (refused) {
            deps.logger.info({ reqId: request.id, status: refused.status, delivery: headerOf(request.headers, 'x-github-delivery') }, 'github delivery refused before reading');
            return reject(reply, { ...refused, isClosing: true });
          }
          const length = contentLengthOf(request.headers);
          const isLarge = length === undefined || length > GITHUB_WEBHOOK_LARGE_BODY_BYTES;
          const release = isLarge ? largeBodies.tryAcquire() : smallBodies.tryAcquire(length);
          if (!release) {
            deps.logger.warn({ reqId: request.id, bytes: length, isLarge }, 'github delivery refused: too many bodies in flight');
            return reject(reply, { ...rejection(503, 'CHANNEL_UNAVAILABLE', githubWebhookMessages.busy), retryAfterSeconds: GITHUB_WEBHOOK_BUSY_RETRY_AFTER_SECONDS, isClosing: true });
          }
          // 'close' comes once the answer is sent or the client is gone, whichever is first.
          reply.raw.once('close', release);
          if (isLarge) deps.logger.debug({ reqId: request.id, bytes: length, inFlight: largeBodies.inUse }, 'github delivery: reading a large body');
        },
      },
      async (request, reply) => {
        const checked = checkDelivery(request, deps);
        if ('status' in checked) return reject(reply, checked);
        const { event, deliveryId } = checked;
        const base = { ok: true as const, event, delivery: deliveryId ?? null };
        // Other events are acknowledged with `handled: false` (reference §7.1).
        if (!isGitHubEvent(event)) {
          deps.logger.info({ reqId: request.id, event, delivery: deliveryId }, 'github delivery ignored: unhandled event');
          return { ...base, handled: false, dispatch: null };
        }
        const shape = githubPayloadSchemas[event].safeParse(checked.payload);
        if (!shape.success) {
          // Signed, so GitHub sent it: answered 200 (a redelivery would not fix it), never fanned out.
          logMalformedEvent(deps.logger, 'github', event, shape.error);
          return { ...base, handled: true, dispatch: { skipped: 'malformed_payload' as const } };
        }
        if (!deps.isEnabled()) {
          deps.logger.info({ reqId: request.id, event, delivery: deliveryId }, 'github delivery skipped: channel disabled');
          return { ...base, handled: true, dispatch: { skipped: 'channel_disabled' as const } };
        }
        const outcome = await dispatchOnce(checked, deps, request.id);
        if ('status' in outcome) return reject(reply, outcome);
        return { ...base, handled: true, ...outcome };
      },
    );
  };
}

/** The body as the parser left it (signature already checked), then the event header and JSON. */
function checkDelivery(request: FastifyRequest, deps: GitHubWebhookDeps): Delivery | Rejection {
  const body = request.body as ReadBody | undefined;
  const deliveryId = headerOf(request.headers, 'x-github-delivery');
  if (body?.kind === 'rejected') {
    deps.logger.info({ reqId: request.id, delivery: deliveryId, bytes: body.bytes, status: body.rejection.status }, 'github delivery rejected');
    return { ...body.rejection, isClosing: true };
  }
  // Without a body (no content type and no length) there is nothing a signature could cover.
  if (body === undefined && deps.config.webhook_secret !== undefined) return rejection(401, 'UNAUTHORIZED', githubWebhookMessages.badSignature);
  if (deps.config.webhook_secret === undefined) {
    deps.logger.warn({ reqId: request.id, delivery: deliveryId }, 'github delivery accepted WITHOUT signature verification (channels.github.allow_unverified)');
  }
  const event = headerOf(request.headers, 'x-github-event');
  if (!event) return rejection(400, 'BAD_REQUEST', githubWebhookMessages.missingEvent);
  const payload = parsePayload(body?.raw.toString('utf8') ?? '');
  if (!payload) return rejection(400, 'BAD_REQUEST', githubWebhookMessages.invalidJson);
  return { event, deliveryId, payload };
}

/** A JSON object, `{}` for an empty body, or undefined for anything else (invalid JSON, an array, a scalar). */
function parsePayload(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs the fan-out once per `X-GitHub-Delivery`: a finished delivery answers its stored summary, one
 * in progress answers `dispatch: null`, a failed one runs again. Without the header there is nothing
 * to dedupe on, so it just runs.
 */
async function dispatchOnce(
  { event, deliveryId, payload }: Delivery,
  deps: GitHubWebhookDeps,
  reqId: string,
): Promise<{ dispatch: DispatchSummary | null; duplicate?: true } | Rejection> {
  const log = { reqId, event, delivery: deliveryId };
  if (deliveryId !== undefined) {
    const claim = await deps.deliveries.begin(deliveryId, event);
    if (claim.kind === 'done') {
      deps.logger.info(log, 'github delivery duplicate: already dispatched');
      return { dispatch: dispatchSummarySchema.parse(claim.summary), duplicate: true };
    }
    if (claim.kind === 'in_progress') {
      deps.logger.info(log, 'github delivery duplicate: in progress');
      return { dispatch: null, duplicate: true };
    }
  }
  let summary: DispatchSummary;
  try {
    summary = await deps.dispatch(event, deliveryId, payload);
  } catch (error) {
    const errorName = error instanceof Error ? error.name : typeof error;
    // The error's message may quote the payload: its class name is all that leaves this function.
    deps.logger.error({ ...log, errorName }, 'github delivery fan-out failed');
    if (deliveryId !== undefined) await settle(deps.deliveries.fail(deliveryId), deps.logger, log);
    return rejection(503, 'CHANNEL_UNAVAILABLE', githubWebhookMessages.fanOutFailed(deliveryId, errorName));
  }
  // The fan-out already enqueued its work: a failed bookkeeping write must not turn into a
  // non-2xx, which would invite a manual redelivery and run it twice.
  if (deliveryId !== undefined) await settle(deps.deliveries.finish(deliveryId, summary), deps.logger, log);
  deps.logger.info({ ...log, matched: summary.matched_agents.length, fired: summary.fired_agents.length }, 'github delivery dispatched');
  return { dispatch: summary };
}

/** Awaits a bookkeeping write, logging (not throwing) its failure. */
async function settle(write: Promise<void>, logger: Logger, log: Record<string, unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    logger.error({ ...log, errorName: error instanceof Error ? error.name : typeof error }, 'github delivery bookkeeping failed');
  }
}

/**
 * Sends a rejection. Refusals before or instead of reading the body close the connection: Node
 * would otherwise read (and drop) the rest of a 25 MB body to keep the connection alive.
 */
function reject(reply: FastifyReply, { status, body, retryAfterSeconds, isClosing = false }: Rejection): FastifyReply {
  if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
  if (isClosing) reply.header('connection', 'close');
  return reply.status(status).send(body);
}
