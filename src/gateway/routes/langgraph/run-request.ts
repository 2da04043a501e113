import { AppError, NotFoundError } from '../../../errors.js';
import { type AgentRuntime, LEAD_AGENT_ID, type RunInfo, type RunRequest, type StreamMode } from '../../../runtime/types.js';
import { SCHEDULE_ORIGIN_CONTEXT_KEY } from '../../../schedules/types.js';
import type { Principal } from '../../auth.js';
import { OWNER_METADATA_KEY } from '../../thread-ownership.js';
import type { RunBody } from './schemas.js';

const SUPPORTED_STREAM_MODES: readonly StreamMode[] = ['values', 'messages', 'messages-tuple', 'updates', 'custom'];

/** User-facing texts of the run routes, in one place. */
export const runMessages = {
  multitaskStrategy: (strategy: string) =>
    `multitask_strategy '${strategy}' is not supported; a thread runs one thing at a time (use 'reject').`,
  streamMode: (mode: string) => `stream_mode '${mode}' is not supported; use ${SUPPORTED_STREAM_MODES.join(', ')}.`,
  rollback: "action 'rollback' is not supported; use 'interrupt'.",
} as const;

/** A well-formed request we do not serve: 422, with the reason for the caller. */
export function unsupported(message: string): AppError {
  return new AppError('BAD_REQUEST', message, { status: 422, userMessage: message });
}

/**
 * Turns a validated run body into the runtime's request. Pure: throws `NotFoundError` for an
 * unknown assistant and a 422 for options we do not serve, before anything happens.
 */
export function toRunRequest(body: RunBody): RunRequest {
  if (body.assistant_id !== LEAD_AGENT_ID) throw new NotFoundError('Assistant');
  const strategy = body.multitask_strategy;
  if (strategy !== undefined && strategy !== 'reject') throw unsupported(runMessages.multitaskStrategy(strategy));
  const streamModes = body.stream_mode?.map((mode) => {
    if (!(SUPPORTED_STREAM_MODES as readonly string[]).includes(mode)) throw unsupported(runMessages.streamMode(mode));
    return mode as StreamMode;
  });
  const request: RunRequest = { assistant_id: body.assistant_id };
  if (body.input !== undefined) request.input = body.input;
  if (body.config !== undefined) request.config = body.config;
  if (body.context !== undefined) request.context = body.context;
  if (body.metadata !== undefined) request.metadata = body.metadata;
  if (strategy !== undefined) request.multitask_strategy = strategy;
  if (streamModes !== undefined) request.stream_mode = streamModes;
  return request;
}

/**
 * Whether the caller's runs get `bash` (`context.trusted_sender`, read by the runtime's
 * `accessFor`): the operator; a caller without a principal, who reaches a run route only on a
 * server that requires none (a single-user server: the gateway's auth hook answers 401
 * everywhere else); a user only when the operator granted them the shell. A body value can take
 * trust away (a client acting for someone less trusted), never add it.
 */
export function trustOf(principal: Principal | undefined, claimed: unknown): boolean {
  const isTrusted = principal === undefined || principal.kind === 'operator' || principal.user.canUseShell;
  return isTrusted && claimed !== false;
}

/**
 * Validates the body, then creates the thread first when the caller asked for `if_not_exists:
 * 'create'`. A signed-in user's runs are theirs: `context.user_id` (whose memory, files and
 * sandbox the run uses) is the user's id whatever the body says, and the chat-only identity keys
 * are dropped. `context.trusted_sender` is always the server's decision ({@link trustOf}), and
 * `context.schedule_origin` is never the caller's.
 */
export async function admitRun(
  runtime: AgentRuntime,
  threadId: string,
  body: RunBody,
  principal?: Principal,
): Promise<RunRequest> {
  const request = toRunRequest(body);
  const trusted = trustOf(principal, request.context?.trusted_sender);
  if (principal?.kind === 'user') {
    const { channel_user_id: _channelUserId, ...context } = request.context ?? {};
    request.context = { ...context, user_id: principal.user.id };
    if (request.config?.configurable) {
      const { user_id: _userId, channel_user_id: _channel, ...configurable } = request.config.configurable;
      request.config = { ...request.config, configurable };
    }
  }
  // Which chat a run's schedules post into is the manager's to say: a caller naming one could
  // have the bot post into any chat it serves.
  const { [SCHEDULE_ORIGIN_CONTEXT_KEY]: _scheduleOrigin, ...context } = request.context ?? {};
  request.context = { ...context, trusted_sender: trusted };
  if (body.if_not_exists === 'create') {
    const metadata = principal?.kind === 'user' ? { [OWNER_METADATA_KEY]: principal.user.id } : {};
    await runtime.createThread({ thread_id: threadId, if_exists: 'do_nothing', metadata });
  }
  return request;
}

/** `Content-Location` of a run; the SDK reads the run and thread ids from it (`onRunCreated`). */
export function runLocation(run: Pick<RunInfo, 'thread_id' | 'run_id'>): string {
  return `/threads/${run.thread_id}/runs/${run.run_id}`;
}
