/**
 * The environment of the agent's shell, built from an allow-list: a name reaches bash only when
 * it is listed here or the run adds it on purpose (per-call variables and secrets). A deny-list
 * of secret-looking names always misses one (`BOT_CREDS`), so nothing else is inherited.
 */

/** Names taken from the server's environment; everything else is left behind. */
export const INHERITED_ENV_NAMES = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'] as const;

/**
 * PATH inside the isolated sandbox: the system's own folders, never the server's PATH (which can
 * name host folders that are not mounted there, such as a version manager under `/root`).
 */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Used when the server's environment has no PATH at all (an unsandboxed shell still needs one). */
const FALLBACK_PATH = SANDBOX_PATH;

export interface SandboxEnvOptions {
  /** The server's environment; only {@link INHERITED_ENV_NAMES} are read from it. */
  baseEnv: Record<string, string | undefined>;
  /** `HOME` of the shell: the workspace, never a host home. */
  homeDir: string;
  /** Variables the run adds for this call only (channel user id, `GH_TOKEN`, …); they win over inherited ones. */
  perCallEnv: Record<string, string>;
  /** True when bash runs in the isolated sandbox: PATH is then {@link SANDBOX_PATH}. */
  isIsolated: boolean;
  /** More names the operator lets through (`sandbox.pass_env`). */
  passNames?: readonly string[];
}

/**
 * The complete environment of one bash call: the allow-listed names (and `passNames`) from `baseEnv` (undefined
 * values dropped), `PATH` fixed when isolated, `HOME` = `homeDir`, then `perCallEnv` on top.
 * Pure: the composition root passes the process environment in.
 */
export function buildSandboxEnv(options: SandboxEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...INHERITED_ENV_NAMES, ...(options.passNames ?? [])]) {
    const value = options.baseEnv[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH = options.isIsolated ? SANDBOX_PATH : (env.PATH ?? FALLBACK_PATH);
  return { ...env, HOME: options.homeDir, ...options.perCallEnv };
}
