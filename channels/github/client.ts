import { Octokit } from '@octokit/core';
import type { Logger } from '../../src/logger.js';

/** The REST client plumbing every GitHub call shares: headers, timeouts, secret-free failures. */

/** Reference §7.5: every GitHub call gives up after 15 s. */
export const GITHUB_REQUEST_TIMEOUT_MS = 15_000;
/** Sent on every request: the documented media type and REST API version. */
export const GITHUB_HEADERS = {
  accept: 'application/vnd.github+json',
  'x-github-api-version': '2022-11-28',
} as const;
export const USER_AGENT = 'deerflow-channels';

/** How to reach GitHub: an installation token with the REST API root, or a ready client. */
export type GitHubAccess =
  | {
      token: string;
      /** REST API root, e.g. `https://api.github.com` or `https://ghe.example.com/api/v3`. */
      apiUrl: string;
    }
  | { octokit: Octokit };

/** Octokit's logger, pointed at ours (it only logs deprecation and clock-skew notices). */
export function octokitLog(logger: Logger) {
  return {
    debug: (message: string) => logger.debug({ source: 'octokit' }, message),
    info: (message: string) => logger.info({ source: 'octokit' }, message),
    warn: (message: string) => logger.warn({ source: 'octokit' }, message),
    error: (message: string) => logger.error({ source: 'octokit' }, message),
  };
}

/**
 * An `@octokit/core` client for `access`: a token and API root give a new client authenticated
 * as the installation; `{ octokit }` is returned as is. Enterprise roots work because every
 * request goes through Octokit's `baseUrl`.
 */
export function clientFor(access: GitHubAccess): Octokit {
  if ('octokit' in access) return access.octokit;
  return new Octokit({ auth: access.token, baseUrl: access.apiUrl, userAgent: USER_AGENT });
}

/** Secret-free facts about a failed GitHub call, for logs. */
export interface GitHubFailure {
  /** The HTTP status GitHub answered with; absent when no answer came (refused, timed out). */
  status?: number;
  /** The error's name, or the network error code (`ECONNREFUSED`, `TimeoutError`) when no answer came. */
  error: string;
}

/**
 * Describes what Octokit threw without its message (which may echo request data). Octokit
 * reports a missing answer as status 500 with no `response`; that is told apart here.
 */
export function describeGitHubFailure(error: unknown): GitHubFailure {
  if (!(error instanceof Error)) return { error: typeof error };
  const status = (error as { status?: unknown }).status;
  const hasResponse = (error as { response?: unknown }).response !== undefined;
  if (typeof status === 'number' && hasResponse) return { status, error: error.name };
  return { error: networkReason(error) };
}

function networkReason(error: Error): string {
  let current: unknown = error;
  // Octokit wraps fetch's TypeError, which wraps the socket error: report the innermost code.
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return current.name;
    current = current.cause;
  }
  return error.name;
}

