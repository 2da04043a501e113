import { z } from 'zod';
import type { GitHubEvent } from './bindings.js';

/**
 * The parts of each handled event's payload the fan-out and the prompts read, checked once the
 * signature held and before either looks (https://docs.github.com/en/webhooks/webhook-events-and-payloads).
 * Loose objects: GitHub sends far more than we read, and the contract is only "what we read has
 * the type we read it as". `null` is allowed where GitHub sends it (a body never written, a
 * deleted user).
 */
const userSchema = z.looseObject({ login: z.string() }).nullish();
const textSchema = z.string().nullish();
const repositorySchema = z.looseObject({ full_name: z.string().min(1) });

const base = {
  action: z.string().optional(),
  repository: repositorySchema,
  sender: userSchema,
};
const issueSchema = z.looseObject({ number: z.number().int(), title: z.string().optional(), body: textSchema, user: userSchema });
const pullRequestSchema = z.looseObject({ number: z.number().int(), title: z.string().optional(), body: textSchema, user: userSchema });
const commentSchema = z.looseObject({ id: z.number().int(), body: textSchema, user: userSchema });

/** One schema per event the channel handles; `ping` has no repository when the hook is an organization's. */
export const githubPayloadSchemas: Record<GitHubEvent, z.ZodType> = {
  ping: z.looseObject({ zen: z.string().optional(), hook_id: z.number().optional(), repository: repositorySchema.optional() }),
  issues: z.looseObject({ ...base, issue: issueSchema }),
  issue_comment: z.looseObject({ ...base, issue: issueSchema, comment: commentSchema }),
  pull_request: z.looseObject({ ...base, number: z.number().int().optional(), pull_request: pullRequestSchema }),
  pull_request_review: z.looseObject({
    ...base,
    pull_request: pullRequestSchema,
    review: z.looseObject({ id: z.number().int(), body: textSchema, state: z.string().optional(), user: userSchema }),
  }),
  pull_request_review_comment: z.looseObject({
    ...base,
    pull_request: pullRequestSchema,
    comment: commentSchema.extend({ pull_request_review_id: z.number().int().nullish(), in_reply_to_id: z.number().int().nullish() }),
  }),
};
