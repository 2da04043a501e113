import { createRequire } from 'node:module';
import { type GitHubTrigger, githubAgentSchema, resolveTriggers } from '../../../../channels/github/bindings.js';
import type { FanOutAgent, FanOutMatch, GitHubAgentLookup } from '../../../../channels/github/fanout.js';

/** Real webhook payloads from `@octokit/webhooks-examples`, copied and edited per test. */

export type Payload = Record<string, unknown>;

interface ExampleSet {
  name: string;
  examples: Payload[];
}

const EXAMPLES = createRequire(import.meta.url)('@octokit/webhooks-examples') as ExampleSet[];

/** A deep copy of the first example of `event` (with `action`, when given). */
export function example(event: string, action?: string): Payload {
  const set = EXAMPLES.find((candidate) => candidate.name === event);
  const found = set?.examples.find((payload) => action === undefined || payload.action === action);
  if (found === undefined) throw new Error(`no example for ${event}.${action ?? '*'}`);
  return structuredClone(found);
}

/** Sets dotted paths (`'comment.body'`) on a copy of `payload`; `undefined` deletes the key. */
export function edit(payload: Payload, changes: Record<string, unknown>): Payload {
  const copy = structuredClone(payload);
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    const last = keys.pop()!;
    let node: Payload = copy;
    for (const key of keys) {
      if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
      node = node[key] as Payload;
    }
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return copy;
}

/** The example's repo. */
export const REPO = 'Codertocat/Hello-World';

/** An agent from a `github:` block as YAML would give it. */
export function agent(name: string, github: unknown, owner?: string): FanOutAgent {
  return { name, owner, github: githubAgentSchema.parse(github) };
}

/** A trigger resolved from YAML for `event` (defaults merged). */
export function trigger(event: string, written: unknown = {}): GitHubTrigger {
  const config = githubAgentSchema.parse({ bindings: [{ repo: REPO, triggers: { [event]: written } }] });
  const resolved = resolveTriggers(config.bindings[0]!) as Record<string, GitHubTrigger>;
  return resolved[event]!;
}

/** The same index the registry builds, over in-memory agents. */
export function lookupOf(agents: readonly FanOutAgent[]): GitHubAgentLookup {
  return {
    matches(repo: string, event: string): FanOutMatch[] {
      const found: FanOutMatch[] = [];
      for (const candidate of agents) {
        for (const binding of candidate.github.bindings) {
          if (binding.repo.toLowerCase() !== repo.toLowerCase()) continue;
          const resolved = resolveTriggers(binding) as Record<string, GitHubTrigger | undefined>;
          const match = resolved[event];
          if (match !== undefined) found.push({ agent: candidate, trigger: match });
        }
      }
      return found;
    },
  };
}
