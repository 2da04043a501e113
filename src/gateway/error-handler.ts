import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError, type ErrorCode } from '../errors.js';

/** Every error body the gateway sends: a stable `code` and a message written for the caller. */
export const errorBodySchema = z.object({ code: z.string(), message: z.string() });
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** Response schemas every route shares for its error statuses. */
export const errorResponses = { '4xx': errorBodySchema, '5xx': errorBodySchema } as const;

/** User-facing texts of the gateway's own errors, in one place. */
export const gatewayMessages = {
  internal: 'Internal server error',
  routeNotFound: 'Route not found',
  invalidJson: 'Request body is not valid JSON.',
  emptyJson: "Request body is empty but content-type is 'application/json'.",
  bodyTooLarge: 'Request body is too large.',
  unsupportedMediaType: "Unsupported content type; send 'application/json'.",
  badContentLength: 'Request body size does not match Content-Length.',
} as const;

/** Fastify's own request errors, re-worded; their texts are fixed, but we choose what callers read. */
const FASTIFY_ERRORS: Record<string, { status: number; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: gatewayMessages.invalidJson },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: gatewayMessages.emptyJson },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: gatewayMessages.bodyTooLarge },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: gatewayMessages.unsupportedMediaType },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: gatewayMessages.badContentLength },
};

/** What the client receives for an error: status and body. Pure, so it is tested without a server. */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof AppError) {
    // A 503 with a written message is a known, operator-fixable state (no model configured), not a crash.
    if (error.status < 500 || (error.status === 503 && error.userMessage !== undefined)) {
      return {
        status: error.status,
        body: { code: error.code, message: error.userMessage ?? STATUS_CODES[error.status] ?? 'Request failed' },
      };
    }
    return internal();
  }
  const fastifyError = error as Partial<FastifyError> | null;
  const known = typeof fastifyError?.code === 'string' ? FASTIFY_ERRORS[fastifyError.code] : undefined;
  if (known) return { status: known.status, body: { code: 'BAD_REQUEST', message: known.message } };
  const status = fastifyError?.statusCode;
  // Other Fastify client errors (bad URL encoding, ...): keep the status, never their text.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code: ErrorCode = status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST';
    return { status, body: { code, message: STATUS_CODES[status] ?? 'Bad request' } };
  }
  return internal();
}

function internal(): { status: number; body: ErrorBody } {
  return { status: 500, body: { code: 'INTERNAL', message: gatewayMessages.internal } };
}

/**
 * The gateway's error handler: client errors answer with their code and a written message; anything
 * else is a generic 500 whose details go only to the log, under the request id.
 */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, body } = toErrorResponse(error);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  else request.log.info({ code: body.code, status }, 'request rejected');
  return reply.status(status).send(body);
}

/** Unknown routes: a JSON 404 like every other error. */
export function handleNotFound(_request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.status(404).send({ code: 'NOT_FOUND', message: gatewayMessages.routeNotFound } satisfies ErrorBody);
}
