import { AgentError, AppError, ConflictError, type ErrorCode, NotFoundError, ThreadBusyError } from '../../errors.js';
import { redactSecrets } from '../../redact.js';
import type { ModelInfo, StreamMode, StreamPart } from '../types.js';

/**
 * How a remote agent server's answers read on this side: its HTTP errors as the `AppError`s the
 * `AgentRuntime` contract names, its run failures as `{ error, message }`, its stream events as
 * the embedded runtime sends them, its model list as `ModelInfo`s. Pure, so every rule is tested
 * without a server.
 */

/**
 * The codes our own gateway writes into error bodies (`{ code, message }`) and run failures. A
 * code outside this list came from another kind of server, whose texts were not written for users.
 */
const OUR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'CONFIG_INVALID',
  'BAD_REQUEST',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'THREAD_BUSY',
  'MODEL_NOT_CONFIGURED',
  'MODEL_FAILED',
  'MODEL_UNAVAILABLE',
  'RUN_CANCELLED',
  'RECURSION_LIMIT',
  'UNPROCESSABLE',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'INTERNAL',
]);

/** Our gateway's messages are short sentences; anything longer is not one of them. */
const MAX_MESSAGE_CHARS = 500;

/** What a call was about, so that an HTTP status becomes the error the contract names. */
export interface CallContext {
  /** Method and route, for logs: `POST /threads/:thread_id/runs/stream`. */
  operation: string;
  /** What a 404 says is missing: `Thread`, `Run`, or the route itself where the server may lack it. */
  subject: string;
  /** Set when the call admits a run on this thread: a 409 then means the thread is busy. */
  admitsRunOn?: string;
}

/** The user-facing sentences of this module, in one place. */
export const remoteMessages = {
  unreachable: (host: string) => `The agent server at ${host} is not reachable right now. Please try again in a moment.`,
  streamBroken: (host: string) => `The connection to the agent server at ${host} broke before the run ended.`,
  credentials: (host: string) => `The agent server at ${host} did not accept this server's API key. Ask the operator to check it.`,
  rateLimited: 'The agent server is busy right now. Please try again in a moment.',
  refused: 'The agent server refused this request.',
  unprocessable: 'The agent server could not process this request.',
  conflict: 'The agent server refused this: it conflicts with what the server already has.',
  runFailed: 'The agent run failed. Please try again.',
  recursionLimit: 'I stopped after too many steps without finishing this task. Tell me to continue, or break the task into smaller steps.',
  runCancelled: 'The run was cancelled.',
  waitCancelled: 'The wait was cancelled.',
  closed: 'The connection to the agent server was closed.',
} as const;

/** A run failure as the embedded runtime reports it: an `error` part's data, `__error__` of a wait. */
export interface RunFailure {
  error: ErrorCode;
  message: string;
}

/** The remote could not be reached, timed out, or failed on its side (5xx). */
export function unavailableError(host: string, message: string, cause?: unknown): AppError {
  // 503 with a written message: the gateway shows it instead of a generic 500.
  return new AppError('INTERNAL', message, { status: 503, userMessage: remoteMessages.unreachable(host), ...(cause === undefined ? {} : { cause }) });
}

/**
 * The error for an HTTP error answer. Only our own gateway's written messages (recognised by
 * their code) reach users, redacted; any other body is never shown nor logged: a foreign server's
 * validation errors echo the request, message text included.
 */
export function fromHttpStatus(status: number, bodyText: string, host: string, context: CallContext): AppError {
  const body = readErrorBody(bodyText);
  const logMessage = `agent server ${host} answered ${status}${body.code === undefined ? '' : ` ${body.code}`} to ${context.operation}`;
  if (status === 404) return new NotFoundError(context.subject);
  if (status === 409) {
    const isBusy = body.code === 'THREAD_BUSY' || (body.code === undefined && context.admitsRunOn !== undefined);
    if (isBusy) return new ThreadBusyError(context.admitsRunOn ?? 'unknown', body.activeRunId);
    return new ConflictError(body.message ?? remoteMessages.conflict);
  }
  // The server-to-server key is the operator's business: not the caller's 401.
  if (status === 401 || status === 403) {
    return new AppError(status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN', logMessage, { status: 503, userMessage: remoteMessages.credentials(host) });
  }
  if (status === 422) return new AppError(body.code ?? 'BAD_REQUEST', logMessage, { status, userMessage: body.message ?? remoteMessages.unprocessable });
  if (status === 429) return new AppError('RATE_LIMITED', logMessage, { status, userMessage: remoteMessages.rateLimited });
  // The one 5xx the contract names (`MODEL_NOT_CONFIGURED`); the manager tells the user why.
  if (status === 503 && body.code === 'MODEL_NOT_CONFIGURED' && body.message !== undefined) {
    return new AgentError('MODEL_NOT_CONFIGURED', logMessage, { status, userMessage: body.message });
  }
  if (status >= 500) return unavailableError(host, logMessage);
  return new AppError(body.code ?? 'BAD_REQUEST', logMessage, { status, userMessage: body.message ?? remoteMessages.refused });
}

/**
 * The error for a call that threw: the SDK's `HTTPError` (it has `status` and the body as `text`),
 * or a transport failure (refused, reset, timed out), which reads as unreachable.
 */
export function fromFailedCall(error: unknown, host: string, context: CallContext): AppError {
  if (error instanceof AppError) return error;
  const { status, text } = (typeof error === 'object' && error !== null ? error : {}) as { status?: unknown; text?: unknown };
  if (typeof status === 'number') return fromHttpStatus(status, typeof text === 'string' ? text : '', host, context);
  return unavailableError(host, `agent server ${host} did not answer ${context.operation}`, error);
}

/** A run that failed, as the remote described it; a foreign server's exception names are not shown. */
export function toRunFailure(data: unknown): RunFailure {
  const { error, message } = (typeof data === 'object' && data !== null ? data : {}) as { error?: unknown; message?: unknown };
  if (typeof error === 'string' && OUR_CODES.has(error) && typeof message === 'string') {
    return { error: error as ErrorCode, message: writtenMessage(message) };
  }
  // LangGraph Platform names the Python exception.
  if (error === 'GraphRecursionError') return { error: 'RECURSION_LIMIT', message: remoteMessages.recursionLimit };
  return { error: 'MODEL_FAILED', message: remoteMessages.runFailed };
}

/** The rejection of a wait whose run failed, with the status the embedded runtime gives that code. */
export function runFailureError(failure: RunFailure): AgentError {
  return new AgentError(failure.error, `remote run failed: ${failure.error}`, {
    status: RUN_FAILURE_STATUS[failure.error] ?? 502,
    userMessage: failure.message,
  });
}

const RUN_FAILURE_STATUS: Partial<Record<ErrorCode, number>> = {
  RUN_CANCELLED: 409,
  RECURSION_LIMIT: 500,
  MODEL_NOT_CONFIGURED: 503,
  INTERNAL: 500,
};

/**
 * The stream modes to ask the remote for. LangGraph Platform answers `messages` with
 * `messages/partial` events (whole messages so far) and `messages-tuple` with `messages` events
 * carrying `[message chunk, metadata]`, which is what the embedded runtime sends for either; our
 * gateway treats the two alike.
 */
export function remoteStreamModes(modes: readonly StreamMode[] | undefined): StreamMode[] | undefined {
  if (modes === undefined) return undefined;
  return [...new Set(modes.map((mode): StreamMode => (mode === 'messages' ? 'messages-tuple' : mode)))];
}

/**
 * Turns one stream's remote events into the parts the embedded runtime sends: `metadata`,
 * `values`, `messages` (`[chunk, metadata]`), `updates`, `custom`, and `error` as
 * `{ error, message }`. A server that still sends `messages/partial` or `messages/complete`
 * (whole messages so far) has them cut into the deltas a `messages` part carries; its
 * `messages/metadata` and the closing `end` event have no counterpart. One instance per stream.
 */
export class StreamPartTranslator {
  /** Text of each message id already passed on, to cut whole messages into deltas. */
  private readonly sentText = new Map<string, string>();
  /** `messages/metadata` by message id, the second half of the `messages` parts made from them. */
  private readonly metadataById = new Map<string, unknown>();

  translate(part: { event: string; data: unknown }): StreamPart[] {
    switch (part.event) {
      case 'error':
        return [{ event: 'error', data: toRunFailure(part.data) }];
      case 'end':
        return [];
      case 'messages/metadata':
        this.rememberMetadata(part.data);
        return [];
      case 'messages/partial':
      case 'messages/complete':
        return this.toDeltas(part.data);
      default:
        return [{ event: part.event, data: part.data }];
    }
  }

  private rememberMetadata(data: unknown): void {
    if (typeof data !== 'object' || data === null) return;
    for (const [id, entry] of Object.entries(data)) {
      const metadata = (entry as { metadata?: unknown } | null)?.metadata;
      this.metadataById.set(id, metadata ?? entry);
    }
  }

  private toDeltas(data: unknown): StreamPart[] {
    if (!Array.isArray(data)) return [];
    const parts: StreamPart[] = [];
    for (const message of data) {
      if (typeof message !== 'object' || message === null) continue;
      const { id, content } = message as { id?: unknown; content?: unknown };
      const key = typeof id === 'string' ? id : '';
      const metadata = this.metadataById.get(key) ?? {};
      if (typeof content !== 'string') {
        parts.push({ event: 'messages', data: [message, metadata] });
        continue;
      }
      const sent = this.sentText.get(key);
      const delta = sent !== undefined && content.startsWith(sent) ? content.slice(sent.length) : content;
      this.sentText.set(key, content);
      // The complete message repeats what its partials already carried.
      if (delta === '' && sent !== undefined) continue;
      parts.push({ event: 'messages', data: [{ ...message, content: delta }, metadata] });
    }
    return parts;
  }
}

/** `GET /models`'s answer (`{ models: [...] }`) as `ModelInfo`s, or undefined when it is not one. */
export function toModelInfos(body: unknown): ModelInfo[] | undefined {
  const models = (body as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return undefined;
  return models.flatMap((entry): ModelInfo[] => {
    const { name, model, thinking, supports_vision } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || typeof model !== 'string') return [];
    return [
      {
        name,
        model,
        ...(thinking === 'on' || thinking === 'off' ? { thinking } : {}),
        ...(supports_vision === true ? { supports_vision: true } : {}),
      },
    ];
  });
}

interface ErrorBody {
  code?: ErrorCode;
  message?: string;
  /** Not sent by our gateway yet; read so that a follow-up buffer can wait for the right run once it is. */
  activeRunId?: string;
}

/** Our gateway's error body, or nothing at all for anyone else's. */
function readErrorBody(text: string): ErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  const { code, message, active_run_id } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof code !== 'string' || !OUR_CODES.has(code)) return {};
  return {
    code: code as ErrorCode,
    ...(typeof message === 'string' && message !== '' ? { message: writtenMessage(message) } : {}),
    ...(typeof active_run_id === 'string' ? { activeRunId: active_run_id } : {}),
  };
}

/** A message our gateway wrote for users; masked and bounded all the same, as it crossed a network. */
function writtenMessage(message: string): string {
  const masked = redactSecrets(message);
  return masked.length > MAX_MESSAGE_CHARS ? `${masked.slice(0, MAX_MESSAGE_CHARS - 1)}…` : masked;
}
