/**
 * GitHub webhook payloads as prompts for an agent (reference §7.4). Pure.
 *
 * Prompts describe what happened ("a pull request was opened on …") and leave the response to
 * the agent's SOUL.md. Each ends by saying the final message is log-only: the channel never
 * posts to GitHub, so an agent that wants to answer must call `gh` during the run. Raw payload
 * JSON never enters a prompt.
 */

/** Longest user-written field (title, body, comment) kept in a prompt, in characters. */
export const MAX_FIELD_CHARS = 4000;
/** Longest diff hunk kept in a review-comment prompt, in characters. */
export const MAX_DIFF_HUNK_CHARS = 2000;
export const TRUNCATION_MARKER = '[…truncated…]';

// Removed in this order: invisible characters first, so `<!\u200B--` cannot hide a comment.
const INVISIBLE = /[\u200B-\u200D\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/g;
// An unterminated comment hides everything after it on GitHub, so it runs to the end here too.
const HTML_COMMENT = /<!--[\s\S]*?(?:-->|$)/g;

/**
 * Removes what GitHub renders invisibly but a model reads: HTML comments (`<!-- … -->`, also one
 * left open at the end), zero-width characters (U+200B–U+200D, U+2060, U+FEFF) and bidi
 * controls (U+202A–U+202E, U+2066–U+2069). Instructions hidden there from human reviewers never
 * reach the agent. Applied to every user-supplied field before it enters a prompt.
 */
export function stripHiddenContent(text: string): string {
  return text.replace(INVISIBLE, '').replace(HTML_COMMENT, '');
}

/**
 * Shortens `text` to at most `maxChars` characters, ending with {@link TRUNCATION_MARKER}
 * (the reference keeps `maxChars - 20` characters, then a blank line and the marker).
 */
export function truncate(text: string, maxChars = MAX_FIELD_CHARS): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars - 20)}\n\n${TRUNCATION_MARKER}`;
}

type Json = Readonly<Record<string, unknown>>;

function objectAt(value: unknown, key: string): Json {
  if (value === null || typeof value !== 'object') return {};
  const child = (value as Json)[key];
  return child !== null && typeof child === 'object' && !Array.isArray(child) ? (child as Json) : {};
}

/** A user-supplied string field, cleaned of hidden content and truncated; '' when absent. */
function text(value: unknown, key: string, maxChars = MAX_FIELD_CHARS): string {
  const raw = value !== null && typeof value === 'object' ? (value as Json)[key] : undefined;
  return typeof raw === 'string' ? truncate(stripHiddenContent(raw), maxChars) : '';
}

/** A short scalar (number, login, state) shown as-is after cleaning. */
function scalar(value: unknown, key: string): string | undefined {
  const raw = value !== null && typeof value === 'object' ? (value as Json)[key] : undefined;
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  if (typeof raw === 'string' && raw !== '') return stripHiddenContent(raw);
  return undefined;
}

function login(value: unknown): string {
  return scalar(objectAt(value, 'user'), 'login') ?? '(unknown)';
}

function repoOf(payload: Json): string {
  return scalar(objectAt(payload, 'repository'), 'full_name') ?? '(unknown repo)';
}

/** The closing instruction every prompt ends with (reference §7.4). */
function logOnly(repo: string, number: string | undefined, howToReply: string): string {
  const where = number === undefined ? repo : `${repo}#${number}`;
  return (
    `Your final assistant message is for the run log only: it will NOT be posted to GitHub. ` +
    `To act on ${where}, use \`gh\` yourself during the run (${howToReply}).`
  );
}

function parentBlock(parent: Json, kind: string): string {
  return (
    `Parent ${kind}:\n` +
    `  Title: ${text(parent, 'title') || '(no title)'}\n` +
    `  Author: ${login(parent)}\n` +
    `  URL: ${scalar(parent, 'html_url') ?? '(no url)'}\n\n` +
    `  Description:\n${text(parent, 'body') || '(no description)'}\n`
  );
}

function pullRequestPrompt(payload: Json): string {
  const pr = objectAt(payload, 'pull_request');
  const repo = repoOf(payload);
  const number = scalar(pr, 'number') ?? scalar(payload, 'number') ?? '?';
  return (
    `A pull request was ${scalar(payload, 'action') ?? 'opened'} on ${repo}:\n\n` +
    `  #${number} ${text(pr, 'title') || '(no title)'}\n` +
    `  Author: ${login(pr)}\n` +
    `  URL: ${scalar(pr, 'html_url') ?? '(no url)'}\n\n` +
    `Description:\n${text(pr, 'body') || '(no description)'}\n\n` +
    `Decide what action (if any) to take for this pull request and carry it out. ` +
    logOnly(repo, number, `e.g. \`gh pr comment ${number} --repo ${repo} --body-file -\` or \`gh pr review\``)
  );
}

function issueCommentPrompt(payload: Json): string {
  const repo = repoOf(payload);
  const issue = objectAt(payload, 'issue');
  const number = scalar(issue, 'number') ?? '?';
  // GitHub sends comments on pull requests as issue_comment too; the issue then has a `pull_request` key.
  const kind = 'pull_request' in issue ? 'pull request' : 'issue';
  const comment = objectAt(payload, 'comment');
  return (
    `A new comment was posted on ${kind} #${number} in ${repo}.\n\n` +
    `${parentBlock(issue, kind)}\n` +
    `New comment:\n` +
    `  Author: ${login(comment)}\n` +
    `  URL: ${scalar(comment, 'html_url') ?? '(no url)'}\n\n` +
    `  Body:\n${text(comment, 'body') || '(empty comment)'}\n\n` +
    `Decide what action (if any) to take in response to this comment, in the context of the parent ${kind} above. ` +
    logOnly(repo, number, `e.g. \`gh issue comment ${number} --repo ${repo} --body-file -\``)
  );
}

function reviewCommentPrompt(payload: Json): string {
  const repo = repoOf(payload);
  const pr = objectAt(payload, 'pull_request');
  const number = scalar(pr, 'number') ?? '?';
  const comment = objectAt(payload, 'comment');
  const line = scalar(comment, 'line') ?? scalar(comment, 'original_line') ?? '?';
  return (
    `A new review comment was posted on pull request #${number} in ${repo}.\n\n` +
    `${parentBlock(pr, 'pull request')}\n` +
    `Review comment:\n` +
    `  Author: ${login(comment)}\n` +
    `  File: ${scalar(comment, 'path') ?? '(unknown file)'}:${line}\n\n` +
    `  Diff context:\n\`\`\`\n${text(comment, 'diff_hunk', MAX_DIFF_HUNK_CHARS)}\n\`\`\`\n\n` +
    `  Body:\n${text(comment, 'body') || '(empty comment)'}\n\n` +
    `Decide what action (if any) to take in response to this review comment, in the context of the parent pull request above. ` +
    logOnly(repo, number, `e.g. \`gh pr comment ${number} --repo ${repo} --body-file -\``)
  );
}

function reviewPrompt(payload: Json): string {
  const repo = repoOf(payload);
  const pr = objectAt(payload, 'pull_request');
  const number = scalar(pr, 'number');
  const review = objectAt(payload, 'review');
  const reviewId = scalar(review, 'id');
  // Inline comments arrive as separate pull_request_review_comment deliveries, which the fan-out
  // drops as redundant for agents that listen to reviews; the agent must fetch them itself.
  const fetchHint =
    reviewId !== undefined && number !== undefined
      ? `This review's inline comments are not included in this message. Before deciding what to do, fetch them with \`gh api repos/${repo}/pulls/${number}/reviews/${reviewId}/comments\`.\n\n`
      : '';
  return (
    `A pull request review was submitted on #${number ?? '?'} in ${repo}.\n\n` +
    `${parentBlock(pr, 'pull request')}\n` +
    `Review:\n` +
    `  Reviewer: ${login(review)}\n` +
    `  State: ${scalar(review, 'state') ?? '(unknown state)'}\n\n` +
    `  Body:\n${text(review, 'body') || '(no review body)'}\n\n` +
    fetchHint +
    `Decide what action (if any) to take in response to this review, in the context of the parent pull request above. ` +
    logOnly(
      repo,
      number,
      `e.g. \`gh pr comment ${number ?? '<number>'} --repo ${repo} --body-file -\`, and \`gh pr checkout\` / \`git push\` for code changes`,
    )
  );
}

function issuesPrompt(payload: Json): string {
  const repo = repoOf(payload);
  const issue = objectAt(payload, 'issue');
  const number = scalar(issue, 'number') ?? '?';
  return (
    `An issue was ${scalar(payload, 'action') ?? 'opened'} on ${repo}:\n\n` +
    `  #${number} ${text(issue, 'title') || '(no title)'}\n` +
    `  Author: ${login(issue)}\n` +
    `  URL: ${scalar(issue, 'html_url') ?? '(no url)'}\n\n` +
    `Description:\n${text(issue, 'body') || '(no description)'}\n\n` +
    `Decide what action (if any) to take for this issue and carry it out. ` +
    logOnly(repo, number, `e.g. \`gh issue comment ${number} --repo ${repo} --body-file -\` or \`gh pr create\``)
  );
}

function pingPrompt(payload: Json): string {
  const repo = repoOf(payload);
  return (
    `GitHub sent a ping event for ${repo}. zen=${JSON.stringify(scalar(payload, 'zen') ?? '(no zen)')} ` +
    `hook_id=${scalar(objectAt(payload, 'hook'), 'id') ?? 'None'}\n\nNo action required. ` +
    logOnly(repo, undefined, 'there is nothing to act on for a ping')
  );
}

function genericPrompt(event: string, payload: Json): string {
  const repo = repoOf(payload);
  return (
    `GitHub event ${JSON.stringify(stripHiddenContent(event))} fired on ${repo}. ` +
    `action=${JSON.stringify(scalar(payload, 'action') ?? null)}\n\n` +
    logOnly(repo, undefined, 'e.g. `gh issue comment` or `gh pr comment`')
  );
}

const BUILDERS: Readonly<Record<string, (payload: Json) => string>> = {
  pull_request: pullRequestPrompt,
  issue_comment: issueCommentPrompt,
  pull_request_review_comment: reviewCommentPrompt,
  pull_request_review: reviewPrompt,
  issues: issuesPrompt,
  ping: pingPrompt,
};

/**
 * The prompt for one delivery of `event`. Unknown events get a generic stub naming the event,
 * the repo and the action. Never throws: missing fields read `(unknown)`, `(no title)` and so on.
 */
export function buildPrompt(event: string, payload: unknown): string {
  const json = payload !== null && typeof payload === 'object' ? (payload as Json) : {};
  const builder = Object.hasOwn(BUILDERS, event) ? BUILDERS[event] : undefined;
  return builder === undefined ? genericPrompt(event, json) : builder(json);
}
