import { DrizzleQueryError } from 'drizzle-orm';
import { redactSecrets } from './redact.js';

/**
 * Errors that cross a module boundary. Two audiences: logs read `message`, `code` and `cause`;
 * users only ever see `userMessage`, written on purpose (never a library's `error.message`).
 */

export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'BAD_REQUEST'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'TOO_MANY_PENDING_CODES'
  | 'THREAD_BUSY'
  | 'MODEL_NOT_CONFIGURED'
  | 'MODEL_FAILED'
  /** The model's endpoint refused the key, does not know the model, rate limits or cannot be reached: the person is told which. */
  | 'MODEL_UNAVAILABLE'
  | 'RUN_CANCELLED'
  /** Another process ended the run while this one held it (its lease ran out in a stall): that process answers, this one stays silent. */
  | 'RUN_TAKEN_OVER'
  | 'INBOUND_QUEUE_FULL'
  | 'INBOUND_QUEUE_CLOSED'
  | 'DUPLICATE_DELIVERY'
  | 'CHANNEL_RATE_LIMITED'
  | 'CHANNEL_UNAUTHORIZED'
  | 'CHANNEL_REJECTED'
  | 'CHANNEL_UNAVAILABLE'
  | 'FILE_TOO_LARGE'
  | 'FILE_UNAVAILABLE'
  | 'RECURSION_LIMIT'
  | 'UNPROCESSABLE'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  /** The operator disabled the account: its key and its bound chats are refused until it is enabled. */
  | 'USER_DISABLED'
  | 'DATA_DIR_IN_USE'
  | 'INTERNAL';

export interface AppErrorOptions {
  cause?: unknown;
  /** HTTP status when the error reaches the gateway. */
  status?: number;
  /** Text safe to show a user; absent means a fixed generic reply is shown instead. */
  userMessage?: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly userMessage: string | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? 500;
    this.userMessage = options.userMessage;
  }
}

export class ConfigError extends AppError {
  /** One line per invalid key: `<key.path>: <expectation>`. */
  readonly issues: string[];

  constructor(issues: string[], options: AppErrorOptions = {}) {
    super('CONFIG_INVALID', `invalid configuration:\n  ${issues.join('\n  ')}`, options);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** The agent side failed or refused: busy thread, missing model, model error, cancellation. */
export class AgentError extends AppError {
  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(code, message, options);
    this.name = 'AgentError';
  }
}

/** A platform answered with an error, or could not be reached. Adapters translate SDK errors into this. */
export class ChannelError extends AppError {
  readonly platform: string;
  /** Set when the platform asked us to wait (HTTP 429 and the like). */
  readonly retryAfterMs: number | undefined;

  constructor(
    platform: string,
    code: ErrorCode,
    message: string,
    options: AppErrorOptions & { retryAfterMs?: number } = {},
  ) {
    super(code, message, options);
    this.name = 'ChannelError';
    this.platform = platform;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export class NotFoundError extends AppError {
  constructor(what: string) {
    super('NOT_FOUND', `${what} not found`, { status: 404, userMessage: `${what} not found` });
    this.name = 'NotFoundError';
  }
}

export class ThreadBusyError extends AgentError {
  /** @param activeRunId the run holding the thread, when known, so a caller can wait for it. */
  constructor(
    threadId: string,
    readonly activeRunId?: string,
  ) {
    super('THREAD_BUSY', `thread ${threadId} already has an active run`, {
      status: 409,
      userMessage: 'Thread is busy with another run.',
    });
    this.name = 'ThreadBusyError';
  }
}

/** Wraps anything thrown so callers can rely on `code`; keeps the original as `cause`. */
export function asAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const message = redactSecrets(error instanceof Error ? error.message : String(error));
  return new AppError('INTERNAL', message, { cause: error });
}

/** A short, secret-free description of an error for logs. */
export function describeError(error: unknown): { code?: string; name?: string; message: string } {
  if (error instanceof AppError) return { code: error.code, name: error.name, message: redactSecrets(error.message) };
  // drizzle's message lists the query's parameters (message text, facts, keys): keep the SQL and
  // the database's own reason, never the values.
  if (error instanceof DrizzleQueryError) {
    const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
    const reason = typeof cause?.message === 'string' ? cause.message : 'query failed';
    return {
      name: 'DrizzleQueryError',
      ...(typeof cause?.code === 'string' ? { code: cause.code } : {}),
      message: `${reason} (in: ${error.query.slice(0, MAX_LOGGED_QUERY_CHARS)})`,
    };
  }
  // A stranger's text (a model endpoint, an SDK) may quote a key: masked before any log sees it.
  if (error instanceof Error) return { name: error.name, message: redactSecrets(error.message) };
  return { message: redactSecrets(String(error)) };
}

/** Enough of a failed statement to recognise it in a log line. */
const MAX_LOGGED_QUERY_CHARS = 200;

export class ConflictError extends AppError {
  constructor(message: string) {
    super('CONFLICT', message, { status: 409, userMessage: message });
    this.name = 'ConflictError';
  }
}

/**
 * Whether `error` says the database could not be reached (refused, dropped, shutting down, or
 * starting up), as opposed to a query it refused: the first passes once the database is back,
 * the second never does. Looks through `cause` chains (drizzle and our own errors wrap the
 * driver's).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08') || SERVER_GOING_AWAY.has(code))) return true;
  }
  return false;
}

/**
 * Node's socket errors and postgres.js's lost connections. Not its `CONNECTION_ENDED` and
 * `CONNECTION_DESTROYED`: those mean this process closed the pool (it is stopping).
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT']);
/** PostgreSQL's class 57P: admin shutdown, crash shutdown, cannot connect now (starting up). Class 08 (connection exceptions) is matched by prefix. */
const SERVER_GOING_AWAY = new Set(['57P01', '57P02', '57P03']);
