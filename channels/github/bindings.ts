import { z } from 'zod';

/**
 * The `github:` block of an agent's `config.yaml` (reference §7.2): which repositories the agent
 * is bound to, and which webhook events wake it there. Pure schema and merge logic; loading the
 * files lives in `agents.ts`.
 */

/** The webhook events a binding may list (reference §7.1); any other key is a validation error. */
export const GITHUB_EVENTS = [
  'issues',
  'issue_comment',
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'ping',
] as const;

export type GitHubEvent = (typeof GITHUB_EVENTS)[number];

/** True when `event` is one of {@link GITHUB_EVENTS}. */
export function isGitHubEvent(event: string): event is GitHubEvent {
  return (GITHUB_EVENTS as readonly string[]).includes(event);
}

/** `owner/name` as GitHub allows them: owner letters, digits and hyphens; name also `.` and `_`. */
export const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\/[A-Za-z0-9._-]+$/;

/** A written-but-blank login (`bot_login: ""`, `bot_login:`) means "not set" (reference §7.2). */
const optionalLogin = z
  .string({ error: 'must be a GitHub login (a string)' })
  .nullish()
  .transform((value) => {
    const trimmed = value?.trim();
    return trimmed === undefined || trimmed === '' ? undefined : trimmed;
  });

const positiveInt = (what: string) =>
  z
    .number({ error: `must be a positive whole number (${what})` })
    .int(`must be a positive whole number (${what})`)
    .positive(`must be a positive whole number (${what})`)
    .nullish()
    .transform((value) => value ?? undefined);

const loginList = z.array(z.string({ error: 'must be a GitHub login' }).trim().min(1, 'must not be empty'), {
  error: 'must be a list of GitHub logins',
});

/**
 * One event's trigger as written. Every field is optional so the merge in
 * {@link resolveTriggers} can tell "set in YAML" from "left out": fields left out take the
 * per-event default from {@link DEFAULT_TRIGGERS}, then the model defaults. Unknown keys are
 * errors, so a typo such as `require_mentions` cannot silently make an agent answer everyone.
 */
export const githubTriggerSchema = z.strictObject({
  actions: z
    .array(z.string({ error: 'must be an action name' }).trim().min(1, 'must not be empty'), {
      error: 'must be a list of actions, or null for any action',
    })
    .nullable()
    .optional()
    .describe('Actions that fire (`opened`, `created`, …); null = any action; [] = none.'),
  require_mention: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('Fire only when the text @-mentions the mention login. Default false (true for comment events).'),
  allow_authors: loginList
    .optional()
    .describe('Authors (case-insensitive) for whom the trigger fires without a mention; they are also trusted.'),
  mention_login: optionalLogin.optional().describe('The login to look for in `@mentions`; blank = not set (see mentionLoginFor).'),
});

export type GitHubTriggerConfig = z.output<typeof githubTriggerSchema>;

/** A trigger after the merge: what the fan-out applies. */
export interface GitHubTrigger {
  /** `null` = any action. */
  actions: readonly string[] | null;
  requireMention: boolean;
  /** Logins as written; compared case-insensitively. */
  allowAuthors: readonly string[];
  mentionLogin: string | undefined;
}

/**
 * Per-event field defaults, merged into a trigger the binding lists (reference §7.2 table). They
 * never enable an event: an event the binding does not list is not registered at all.
 */
export const DEFAULT_TRIGGERS: Readonly<Record<GitHubEvent, Readonly<Partial<GitHubTrigger>>>> = {
  issues: {},
  issue_comment: { requireMention: true },
  pull_request: { actions: ['opened'] },
  pull_request_review: {},
  pull_request_review_comment: { requireMention: true },
  ping: {},
};

const MODEL_DEFAULTS: GitHubTrigger = { actions: null, requireMention: false, allowAuthors: [], mentionLogin: undefined };

// `issue_comment:` with nothing after it is YAML null; it means "listed, all defaults".
const listedTrigger = githubTriggerSchema.nullish().transform((trigger): GitHubTriggerConfig => trigger ?? {});

/** Strict: an unknown event name (`push`, a typo) is an error naming the key. */
const triggersSchema = z.strictObject(
  Object.fromEntries(GITHUB_EVENTS.map((event) => [event, listedTrigger.optional()])) as Record<
    GitHubEvent,
    z.ZodOptional<typeof listedTrigger>
  >,
  { error: (issue) => (issue.code === 'invalid_type' ? 'must be a mapping of event names to trigger settings' : undefined) },
);

export const githubBindingSchema = z.strictObject({
  repo: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string (owner/name)') })
    .trim()
    .regex(REPO_PATTERN, 'must be owner/name, e.g. octo-org/hello-world')
    .describe('The repository, `owner/name`; matched case-insensitively.'),
  triggers: triggersSchema
    .nullish()
    .transform((triggers) => triggers ?? {})
    .describe('Events this binding listens to; only listed events register.'),
});

export type GitHubBinding = z.output<typeof githubBindingSchema>;

/** The `github:` block of an agent's config.yaml (reference §7.2). */
export const githubAgentSchema = z
  .strictObject({
    installation_id: positiveInt('a GitHub App installation id').describe(
      'GitHub App installation whose token the agent gets; absent = no token is minted.',
    ),
    bot_login: optionalLogin.describe('The login the agent posts as, without `[bot]`; blank = not set.'),
    recursion_limit: positiveInt('graph steps per run').describe(
      "Graph steps allowed per run; absent = the GitHub channel's default.",
    ),
    token_permissions: z
      .record(
        z.string().regex(/^[a-z_]+$/, 'must be a GitHub App permission name, e.g. contents'),
        z.enum(['read', 'write'], { error: "must be 'read' or 'write'" }),
        { error: 'must be a mapping of permission names to read or write' },
      )
      .optional()
      .describe(
        "Permissions of the token the agent's shell gets, on the event's repository only, e.g. { contents: write } to push; absent = contents: read, issues: write, pull_requests: write, metadata: read. Never more than the App installation has.",
      ),
    trusted_authors: z
      .enum(['write', 'any'], { error: "must be 'any' (any author may wake the agent) or 'write'" })
      .default('write')
      .describe(
        "Whose events may wake the agent: 'write' (default) = people with write access to the repo or listed in a trigger's allow_authors; 'any' = anyone.",
      ),
    bindings: z
      .array(githubBindingSchema, { error: 'must be a list of bindings' })
      .nullish()
      .transform((bindings) => bindings ?? [])
      .describe('At most one binding per repo.'),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.bindings.forEach((binding, index) => {
      // GitHub treats repo names case-insensitively, and so does the index: two spellings are one repo.
      const key = binding.repo.toLowerCase();
      if (seen.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: ['bindings', index, 'repo'],
          message: `duplicate binding for repo ${binding.repo}: each repo may appear once; merge their triggers into one binding`,
        });
      }
      seen.add(key);
    });
  });

export type GitHubAgentConfig = z.output<typeof githubAgentSchema>;

/**
 * The binding's listed events with their triggers resolved: fields set in YAML win, then the
 * event's {@link DEFAULT_TRIGGERS} entry, then the model defaults (any action, no mention, no
 * allowed authors). Events the binding does not list are absent.
 */
export function resolveTriggers(binding: GitHubBinding): Partial<Record<GitHubEvent, GitHubTrigger>> {
  const resolved: Partial<Record<GitHubEvent, GitHubTrigger>> = {};
  for (const event of GITHUB_EVENTS) {
    const written = binding.triggers[event];
    if (written === undefined) continue;
    resolved[event] = { ...MODEL_DEFAULTS, ...DEFAULT_TRIGGERS[event], ...explicitFields(written) };
  }
  return resolved;
}

function explicitFields(written: GitHubTriggerConfig): Partial<GitHubTrigger> {
  const fields: Partial<GitHubTrigger> = {};
  // `actions: null` is an explicit "any action" and must beat the default, so test for the key.
  if (written.actions !== undefined) fields.actions = written.actions;
  if (written.require_mention !== undefined) fields.requireMention = written.require_mention;
  if (written.allow_authors !== undefined) fields.allowAuthors = written.allow_authors;
  if (written.mention_login !== undefined) fields.mentionLogin = written.mention_login;
  return fields;
}
