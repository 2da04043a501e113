import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../../errors.js';
import type { AgentRuntime, RunOptions, StreamPart } from '../../../runtime/types.js';
import { errorResponses, gatewayMessages } from '../../error-handler.js';
import { clientGoneSignal, openSseStream, type SseWriter } from '../../sse.js';
import type { ZodPluginAsync } from '../../validation.js';
import { admitRun, runLocation, runMessages, unsupported } from './run-request.js';
import {
  cancelQuerySchema,
  type RunBody,
  runBodySchema,
  runParamsSchema,
  runSchema,
  threadParamsSchema,
  waitResultSchema,
} from './schemas.js';

/** The runs of a thread: stream, wait, create (background), get, cancel. */
export const runRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  const runSchemas = { params: threadParamsSchema, body: runBodySchema } as const;

  // SSE. A busy thread or bad input answers with JSON before the first SSE byte: the runtime
  // admits the run (or throws) before we take the response over.
  app.post('/threads/:thread_id/runs/stream', { schema: { ...runSchemas, response: errorResponses } }, async (request, reply) => {
    const { thread_id } = request.params;
    const runRequest = await admitRun(runtime, thread_id, request.body, request.principal);
    const { run, events } = await runtime.streamRun(thread_id, runRequest, disconnectOptions(request.body, clientGoneSignal(reply)));
    const sse = openSseStream(reply, { 'content-location': runLocation(run) });
    await pipeEvents(events, sse, request.log.child({ runId: run.run_id }));
    return reply;
  });

  app.post(
    '/threads/:thread_id/runs/wait',
    { schema: { ...runSchemas, response: { 200: waitResultSchema, ...errorResponses } } },
    async (request, reply) => {
      const { thread_id } = request.params;
      const runRequest = await admitRun(runtime, thread_id, request.body, request.principal);
      try {
        const { run, values } = await runtime.waitRun(thread_id, runRequest, disconnectOptions(request.body, clientGoneSignal(reply)));
        return reply.header('content-location', runLocation(run)).send(values);
      } catch (error) {
        const failure = runFailure(error);
        if (!failure) throw error;
        request.log[error instanceof AppError ? 'warn' : 'error']({ err: error }, 'run failed');
        // LangGraph answers a failed run with 200 and `__error__`; the SDK turns it into a throw.
        return reply.send({ __error__: failure });
      }
    },
  );

  app.post(
    '/threads/:thread_id/runs',
    { schema: { ...runSchemas, response: { 200: runSchema, ...errorResponses } } },
    async (request, reply) => {
      const { thread_id } = request.params;
      const run = await runtime.createRun(thread_id, await admitRun(runtime, thread_id, request.body, request.principal));
      return reply.header('content-location', runLocation(run)).send(run);
    },
  );

  app.get(
    '/threads/:thread_id/runs/:run_id',
    { schema: { params: runParamsSchema, response: { 200: runSchema, ...errorResponses } } },
    async (request) => runtime.getRun(request.params.thread_id, request.params.run_id),
  );

  app.post(
    '/threads/:thread_id/runs/:run_id/cancel',
    {
      schema: {
        params: runParamsSchema,
        querystring: cancelQuerySchema,
        response: { 202: z.undefined(), 204: z.undefined(), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { thread_id, run_id } = request.params;
      const { wait, action } = request.query;
      if (action === 'rollback') throw unsupported(runMessages.rollback);
      await runtime.cancelRun(thread_id, run_id, { wait });
      return reply.status(wait ? 204 : 202).send(undefined);
    },
  );
};

function disconnectOptions(body: RunBody, clientGone: AbortSignal): RunOptions {
  return body.on_disconnect === 'continue' ? {} : { signal: clientGone };
}

/**
 * Writes every part as an SSE frame, then ends the response. Once the client is gone the rest is
 * drained unwritten: with `on_disconnect: 'cancel'` the aborted run ends soon; with `continue` it
 * must be read to its end.
 */
async function pipeEvents(events: AsyncIterable<StreamPart>, sse: SseWriter, log: FastifyBaseLogger): Promise<void> {
  let sent = 0;
  try {
    for await (const part of events) if (await sse.write(part)) sent += 1;
    // Hijacked replies skip Fastify's "request completed" line; this one says how the stream went.
    log.info({ events: sent, isClientGone: sse.isClosed }, 'run stream ended');
  } catch (error) {
    // The contract says failures arrive as an `error` part; this is a runtime bug, told generically.
    log.error({ err: error }, 'run stream failed');
    await sse.write({ event: 'error', data: { error: 'INTERNAL', message: gatewayMessages.internal } });
  } finally {
    sse.end();
  }
}

/**
 * What a failed `waitRun` shows the caller as `__error__`, or undefined when the error is a
 * refusal before the run started (busy, not found, bad input: status below 500), which answers
 * with its HTTP status. A cancelled run is an outcome, not a refusal, whatever its status.
 */
export function runFailure(error: unknown): { error: string; message: string } | undefined {
  if (error instanceof AppError) {
    if (error.status < 500 && error.code !== 'RUN_CANCELLED') return undefined;
    return { error: error.code, message: error.userMessage ?? gatewayMessages.internal };
  }
  return { error: 'INTERNAL', message: gatewayMessages.internal };
}
