import { ChannelError, type ErrorCode } from '../../src/errors.js';
import { clientFor, describeGitHubFailure, GITHUB_HEADERS, GITHUB_REQUEST_TIMEOUT_MS, type GitHubAccess } from './client.js';

const PLATFORM = 'github';
/**
 * Base roles that can push. `permission` is GitHub's legacy base role (admin, write, read,
 * none; "maintain is mapped to write and triage to read"); `maintain` is listed too in case an
 * Enterprise Server answers with the fine-grained name.
 * https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
 */
const WRITE_PERMISSIONS = new Set(['admin', 'maintain', 'write']);

export interface WriteAccessQuery {
  /** `owner/name`, as `repository.full_name`. */
  repo: string;
  /** GitHub login to check; bot logins (`dependabot[bot]`) are checked as they are. */
  login: string;
  /** Give up after this long. Default {@link GITHUB_REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Whether `login` can push to `repo`: true for the `admin`, `maintain` and `write` base roles;
 * false for `triage`, `read`, `none` and for a login GitHub does not know (404).
 * Callers fail closed: anything thrown means "no run".
 * @throws ChannelError(`github`): `CHANNEL_UNAVAILABLE` when GitHub is unreachable, times out or
 *   answers 5xx; `CHANNEL_UNAUTHORIZED` on 401; `CHANNEL_RATE_LIMITED` on 429 or a 403 with no
 *   requests left; `CHANNEL_REJECTED` on other 4xx and for a `repo` that is not `owner/name`.
 */
export async function hasWriteAccess(query: GitHubAccess & WriteAccessQuery): Promise<boolean> {
  const [owner, name, ...rest] = query.repo.split('/');
  if (!owner || !name || rest.length > 0) {
    throw new ChannelError(PLATFORM, 'CHANNEL_REJECTED', `GitHub permission check: repo must be owner/name, got ${query.repo}`);
  }
  if (query.login === '') return false;
  try {
    const { data } = await clientFor(query).request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', {
      owner,
      repo: name,
      username: query.login,
      headers: GITHUB_HEADERS,
      request: { signal: AbortSignal.timeout(query.timeoutMs ?? GITHUB_REQUEST_TIMEOUT_MS) },
    });
    return WRITE_PERMISSIONS.has(data.permission);
  } catch (error) {
    if (describeGitHubFailure(error).status === 404) return false;
    throw permissionError(error, query);
  }
}

/** Translates an Octokit failure of the permission call; the message carries repo, login and status only. */
function permissionError(error: unknown, query: WriteAccessQuery): ChannelError {
  const failure = describeGitHubFailure(error);
  const where = `GitHub permission check for ${query.login} on ${query.repo}`;
  if (failure.status === undefined) {
    return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `${where}: GitHub unreachable (${failure.error})`, {
      status: 502,
      cause: failure,
    });
  }
  const headers = (error as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {};
  const code = codeFor(failure.status, headers);
  const retryAfterMs = code === 'CHANNEL_RATE_LIMITED' ? retryAfterMsFrom(headers) : undefined;
  return new ChannelError(PLATFORM, code, `${where} failed (${failure.status})`, {
    status: 502,
    cause: failure,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

function codeFor(status: number, headers: Record<string, string | undefined>): ErrorCode {
  if (status === 401) return 'CHANNEL_UNAUTHORIZED';
  // A primary or secondary rate limit: 429, or 403 with no requests left or a retry-after.
  if (status === 429 || (status === 403 && (headers['x-ratelimit-remaining'] === '0' || headers['retry-after'] !== undefined))) {
    return 'CHANNEL_RATE_LIMITED';
  }
  if (status >= 400 && status < 500) return 'CHANNEL_REJECTED';
  return 'CHANNEL_UNAVAILABLE';
}

/** `retry-after` seconds, else `x-ratelimit-reset` (epoch seconds) from now, else undefined. */
function retryAfterMsFrom(headers: Record<string, string | undefined>): number | undefined {
  const retryAfter = Number(headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return retryAfter * 1000;
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - Date.now());
  return undefined;
}
