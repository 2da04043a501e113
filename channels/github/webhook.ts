import { Webhooks } from '@octokit/webhooks';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { WebhookDeliveries } from '../../src/channel/types.js';
import type { ErrorCode } from '../../src/errors.js';
import { type ErrorBody, errorResponses } from '../../src/gateway/error-handler.js';
import { type ZodTypeProvider, zodSerializerCompiler, zodValidatorCompiler } from '../../src/gateway/validation.js';
import type { Logger } from '../../src/logger.js';
import { isGitHubEvent } from './bindings.js';
import type { GitHubConfig } from './config.js';

/**
 * "Payloads are capped at 25 MB. If your event generates a larger payload, a webhook will not be
 * fired." (https://docs.github.com/en/webhooks/webhook-events-and-payloads). Anything larger is not
 * from GitHub and gets 413 before it is read further.
 */
export const GITHUB_WEBHOOK_BODY_LIMIT_BYTES = 25 * 1024 * 1024;

/** The texts callers read, exactly as reference §7.1 words them (config keys are ours). */
export const githubWebhookMessages = {
  notConfigured:
    'Webhook signature verification not configured. Set channels.github.webhook_secret or channels.github.allow_unverified: true for unverified dev mode.',
  badSignature: 'Invalid or missing X-Hub-Signature-256',
  missingEvent: 'Missing X-GitHub-Event header',
  invalidJson: 'Invalid JSON body',
  /** Names the error class only: a fan-out error's message may quote the payload. */
  fanOutFailed: (deliveryId: string | undefined, errorName: string) => `fan-out failed for delivery '${deliveryId ?? ''}': ${errorName}`,
} as const;

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
  dispatch: z.union([dispatchSummarySchema, z.object({ skipped: z.literal('channel_disabled') }), z.null()]),
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
}

/** A checked request, ready for the fan-out. */
interface Delivery {
  event: string;
  deliveryId: string | undefined;
  payload: Record<string, unknown>;
}

type Rejection = { status: number; body: ErrorBody };

/**
 * `POST /` for GitHub webhooks, mounted at `/api/webhooks/github` in its own context: the raw
 * body (up to {@link GITHUB_WEBHOOK_BODY_LIMIT_BYTES}, else 413) is kept as bytes for the
 * signature. Checks run in reference §7.1's order: secret configured (503) → signature (401) →
 * `X-GitHub-Event` (400) → JSON (400) → known event → kill switch → duplicate `X-GitHub-Delivery`
 * → dispatch (503 when it throws). Every accepted delivery gets 200 `{ok, event, delivery,
 * handled, dispatch}` well within GitHub's 10 s, since `dispatch` only enqueues.
 */
export function githubWebhookRoutes(deps: GitHubWebhookDeps): FastifyPluginAsync {
  const verifier = deps.config.webhook_secret ? new Webhooks({ secret: deps.config.webhook_secret }) : undefined;
  return async (instance) => {
    const app = instance.withTypeProvider<ZodTypeProvider>();
    // Inside this context only: the plugin works under buildApp and on a bare Fastify alike.
    app.setValidatorCompiler(zodValidatorCompiler);
    app.setSerializerCompiler(zodSerializerCompiler);
    // The signature covers the exact bytes, so every content type arrives unparsed.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(['application/json', '*'], { parseAs: 'buffer', bodyLimit: GITHUB_WEBHOOK_BODY_LIMIT_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    app.post(
      '/',
      { bodyLimit: GITHUB_WEBHOOK_BODY_LIMIT_BYTES, schema: { response: { 200: webhookReplySchema, ...errorResponses } } },
      async (request, reply) => {
        const checked = await checkDelivery(request, deps, verifier);
        if ('status' in checked) return reject(reply, checked);
        const { event, deliveryId } = checked;
        const base = { ok: true as const, event, delivery: deliveryId ?? null };
        // Other events are acknowledged with `handled: false` (reference §7.1).
        if (!isGitHubEvent(event)) {
          deps.logger.info({ reqId: request.id, event, delivery: deliveryId }, 'github delivery ignored: unhandled event');
          return { ...base, handled: false, dispatch: null };
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

/** Secret, signature, event header and JSON, in that order; the first failure is the answer. */
async function checkDelivery(request: FastifyRequest, deps: GitHubWebhookDeps, verifier: Webhooks | undefined): Promise<Delivery | Rejection> {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const deliveryId = headerOf(request, 'x-github-delivery');
  // Decoded once: the signature is checked over this text and the same text is parsed.
  const text = raw.toString('utf8');
  if (!verifier) {
    if (!deps.config.allow_unverified) return rejection(503, 'CHANNEL_UNAVAILABLE', githubWebhookMessages.notConfigured);
    deps.logger.warn({ reqId: request.id, delivery: deliveryId }, 'github delivery accepted WITHOUT signature verification (channels.github.allow_unverified)');
  } else if (!(await isSignatureValid(verifier, text, headerOf(request, 'x-hub-signature-256')))) {
    deps.logger.info({ reqId: request.id, delivery: deliveryId, bytes: raw.length }, 'github delivery rejected: bad signature');
    return rejection(401, 'UNAUTHORIZED', githubWebhookMessages.badSignature);
  }
  const event = headerOf(request, 'x-github-event');
  if (!event) return rejection(400, 'BAD_REQUEST', githubWebhookMessages.missingEvent);
  const payload = parsePayload(text);
  if (!payload) return rejection(400, 'BAD_REQUEST', githubWebhookMessages.invalidJson);
  return { event, deliveryId, payload };
}

/**
 * `X-Hub-Signature-256: sha256=<hex>` against HMAC-SHA256(secret, body), compared in constant
 * time by `@octokit/webhooks`. It signs text, so a body that is not UTF-8 fails (JSON must be
 * UTF-8 anyway), and it refuses empty bodies, which GitHub never sends.
 */
async function isSignatureValid(verifier: Webhooks, text: string, signature: string | undefined): Promise<boolean> {
  if (!signature || text.length === 0) return false;
  try {
    return await verifier.verify(text, signature);
  } catch {
    return false;
  }
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

/** A header's value; a repeated header (an array) counts as absent rather than guessing which one counts. */
function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function rejection(status: number, code: ErrorCode, message: string): Rejection {
  return { status, body: { code, message } };
}

function reject(reply: FastifyReply, { status, body }: Rejection): FastifyReply {
  return reply.status(status).send(body);
}
