import { DiscordAPIError, DiscordjsError, HTTPError, RateLimitError } from 'discord.js';
import { ChannelError, type ErrorCode } from '../../src/errors.js';
import { redactSecrets } from '../../src/redact.js';

const PLATFORM = 'discord';

/** Discord JSON error codes the adapter acts on (`developers/topics/opcodes-and-status-codes.mdx`). */
export const DISCORD_ERROR_CODES = {
  /** "Cannot execute action on this channel type" (e.g. a thread in a thread, a DM). */
  wrongChannelType: 50024,
  /** "A thread has already been created for this message". */
  threadAlreadyCreated: 160004,
  /** "Maximum number of edits to messages older than 1 hour reached". */
  oldMessageEdits: 30046,
} as const;

function codeFor(status: number): ErrorCode {
  if (status === 429) return 'CHANNEL_RATE_LIMITED';
  if (status === 401) return 'CHANNEL_UNAUTHORIZED';
  if (status === 400 || status === 403 || status === 404) return 'CHANNEL_REJECTED';
  if (status === 413) return 'FILE_TOO_LARGE';
  return 'CHANNEL_UNAVAILABLE';
}

/** Discord's JSON error code of a rejected call (`cause.discordCode`), when it had one. */
export function discordCodeOf(error: unknown): number | undefined {
  const code = (error as { cause?: { discordCode?: unknown } } | undefined)?.cause?.discordCode;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Translates what discord.js threw into a `ChannelError` (a `ChannelError` passes through):
 * `DiscordAPIError` by HTTP status (429 → `CHANNEL_RATE_LIMITED`, 401 → `CHANNEL_UNAUTHORIZED`,
 * 400/403/404 → `CHANNEL_REJECTED`, 413 → `FILE_TOO_LARGE`, else `CHANNEL_UNAVAILABLE`), with
 * Discord's code in `cause.discordCode`; `RateLimitError` → `CHANNEL_RATE_LIMITED` with
 * `retryAfterMs`; a `TokenInvalid` login → `CHANNEL_UNAUTHORIZED`; `HTTPError`, network failures
 * and unknowns → `CHANNEL_UNAVAILABLE`.
 *
 * Messages name the method, the route and Discord's description, never the request body
 * (message text) or the token.
 */
export function toChannelError(error: unknown): ChannelError {
  if (error instanceof ChannelError) return error;
  if (error instanceof RateLimitError) {
    return new ChannelError(PLATFORM, 'CHANNEL_RATE_LIMITED', `Discord rate limited ${error.method} ${error.route}`, {
      status: 502,
      retryAfterMs: error.retryAfter,
      cause: { route: error.route, scope: error.scope, global: error.global },
    });
  }
  if (error instanceof DiscordAPIError) {
    const discordCode = typeof error.code === 'number' ? error.code : undefined;
    return new ChannelError(PLATFORM, codeFor(error.status), `Discord ${error.method.toUpperCase()} ${routeOf(error.url)} failed (${error.status}: ${error.message})`, {
      status: 502,
      cause: { status: error.status, discordCode, method: error.method },
    });
  }
  if (error instanceof HTTPError) {
    return new ChannelError(PLATFORM, codeFor(error.status), `Discord ${error.method.toUpperCase()} ${routeOf(error.url)} failed (HTTP ${error.status})`, {
      status: 502,
      cause: { status: error.status, method: error.method },
    });
  }
  if (error instanceof DiscordjsError && error.code === 'TokenInvalid') {
    return new ChannelError(PLATFORM, 'CHANNEL_UNAUTHORIZED', 'Discord rejected the bot token (401 Unauthorized)', {
      status: 502,
      cause: { code: error.code },
    });
  }
  const name = error instanceof Error ? error.name : typeof error;
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | undefined)?.cause?.code ?? (error as { code?: unknown })?.code;
  return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Discord call failed (${reasonOf(error)})`, {
    status: 502,
    cause: typeof code === 'string' ? { name, code } : { name },
  });
}

/**
 * What a failure outside discord.js's own errors says of itself, and of its cause: a network
 * client's `TypeError: fetch failed` means little without the socket error under it. Secrets an
 * HTTP client may quote are masked; discord.js never puts a message body in such an error.
 */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const cause = error.cause instanceof Error ? `; cause ${error.cause.name}: ${error.cause.message}` : '';
  return redactSecrets(`${error.name}: ${error.message}${cause}`).slice(0, MAX_REASON_CHARS);
}

/** Enough of a stranger's error text to recognise it in a log line. */
const MAX_REASON_CHARS = 300;

/** Gateway close codes after which discord.js gives up (`developers/topics/opcodes-and-status-codes.mdx`). */
const GATEWAY_CLOSE_REASONS: Readonly<Record<number, { code: ErrorCode; reason: string }>> = {
  4004: { code: 'CHANNEL_UNAUTHORIZED', reason: 'Discord rejected the bot token at the gateway (4004 Authentication failed)' },
  4013: { code: 'CHANNEL_REJECTED', reason: 'Discord refused the gateway intents (4013 Invalid intents)' },
  4014: {
    code: 'CHANNEL_REJECTED',
    reason: 'Discord refused the Message Content intent (4014 Disallowed intents): enable it under Bot → Privileged Gateway Intents',
  },
};

/** Why the gateway closed for good, as a `ChannelError` whose message is an operator's reason. */
export function gatewayCloseError(closeCode: number): ChannelError {
  const known = GATEWAY_CLOSE_REASONS[closeCode];
  return new ChannelError(PLATFORM, known?.code ?? 'CHANNEL_UNAVAILABLE', known?.reason ?? `Discord closed the gateway for good (close code ${closeCode})`, {
    status: 502,
    cause: { closeCode },
  });
}

/** The path of a REST URL without host and query (ids only; no token ever appears in URLs). */
function routeOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '(unknown route)';
  }
}
