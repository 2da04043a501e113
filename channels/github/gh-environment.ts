import type { SandboxEnvironment } from '../../src/channel/types.js';

/**
 * The environment that points the `gh` CLI in an agent's sandbox at the configured GitHub with an
 * installation token (reference §7.5: "the sandbox `bash` tool exposes it as `GH_TOKEN` and
 * `GITHUB_TOKEN`"). For GitHub Enterprise Server, `gh` only talks to the host named by
 * `GH_HOST` (it may carry a port) and takes that host's token from `GH_ENTERPRISE_TOKEN` only
 * (`GH_TOKEN` alone is silently not sent there; https://cli.github.com/manual/gh_help_environment),
 * so both are derived from `api_url`.
 */

/** Hosts `gh` treats as github.com; everything else is an Enterprise Server host. */
const GITHUB_DOT_COM_API = new Set(['api.github.com', 'github.com']);

/** `GH_HOST` for `channels.github.api_url`; undefined for github.com, where `gh` needs none. */
export function ghHostOf(apiUrl: string): string | undefined {
  const url = new URL(apiUrl);
  return GITHUB_DOT_COM_API.has(url.hostname) ? undefined : url.host;
}

/**
 * The variables of one run's shell commands: the token (a secret) under every name `gh` and
 * other tools read it from, the host (plain) for Enterprise Server, and no prompts. Without a token, no secrets.
 */
export function ghEnvironment(apiUrl: string, token: string | undefined): SandboxEnvironment {
  const host = ghHostOf(apiUrl);
  // Nobody answers a prompt in a sandbox: without these `gh` may open an editor and hang.
  const variables: Record<string, string> = { GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1' };
  if (host !== undefined) variables.GH_HOST = host;
  if (token === undefined) return { variables };
  const secrets: Record<string, string> = { GH_TOKEN: token, GITHUB_TOKEN: token };
  if (host !== undefined) Object.assign(secrets, { GH_ENTERPRISE_TOKEN: token, GITHUB_ENTERPRISE_TOKEN: token });
  return { secrets, variables };
}
