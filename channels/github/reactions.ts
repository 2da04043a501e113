import type { Logger } from '../../src/logger.js';
import { clientFor, describeGitHubFailure, GITHUB_HEADERS, GITHUB_REQUEST_TIMEOUT_MS, type GitHubAccess } from './client.js';

/**
 * What to react to: an issue or pull request (by number), an issue / PR conversation comment,
 * or a pull request review comment (by comment id). They are three different REST routes.
 * https://docs.github.com/rest/reactions/reactions
 */
export type ReactionTarget =
  | { kind: 'issue'; number: number }
  | { kind: 'issue_comment'; id: number }
  | { kind: 'review_comment'; id: number };

export interface EyesReactionOptions {
  /** `owner/name`, as `repository.full_name`. */
  repo: string;
  target: ReactionTarget;
  logger: Logger;
  /** Give up after this long. Default {@link GITHUB_REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Puts 👀 (`eyes`) on `target` as the App, to show a delivery was picked up. Best effort: never
 * rejects; a failure (bad repo, GitHub down, no permission) is logged as a warning with the
 * status or error name and resolves `false`. Resolves `true` when GitHub accepted it (201, or
 * 200 when the reaction was already there).
 */
export async function addEyesReaction(options: GitHubAccess & EyesReactionOptions): Promise<boolean> {
  const { repo, target, logger } = options;
  const [owner, name, ...rest] = repo.split('/');
  if (!owner || !name || rest.length > 0) {
    logger.warn({ repo, target: target.kind }, 'GitHub eyes reaction skipped: repo must be owner/name');
    return false;
  }
  const common = {
    owner,
    repo: name,
    content: 'eyes' as const,
    headers: GITHUB_HEADERS,
    request: { signal: AbortSignal.timeout(options.timeoutMs ?? GITHUB_REQUEST_TIMEOUT_MS) },
  };
  try {
    const octokit = clientFor(options);
    if (target.kind === 'issue') {
      await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/reactions', { ...common, issue_number: target.number });
    } else if (target.kind === 'issue_comment') {
      await octokit.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', { ...common, comment_id: target.id });
    } else {
      await octokit.request('POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions', { ...common, comment_id: target.id });
    }
    return true;
  } catch (error) {
    logger.warn({ repo, target: target.kind, ...describeGitHubFailure(error) }, 'GitHub eyes reaction failed');
    return false;
  }
}
