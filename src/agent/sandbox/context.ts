import type { RunnableConfig } from '@langchain/core/runnables';
import { DEFAULT_USER_ID } from '../../runtime/types.js';
import type { SandboxUser } from './bubblewrap.js';
import { SandboxError, SandboxPaths } from './paths.js';

/** What one tool call runs against: the thread's folders and variables injected for this call only. */
export interface SandboxContext {
  paths: SandboxPaths;
  /** Added to the bash environment on purpose, e.g. `DEERFLOW_CHANNEL_USER_ID`. */
  perCallEnv: Record<string, string>;
  /** The run's own network choice (an agent's `sandbox.network`); absent = `sandbox.network`. */
  isNetworkEnabled?: boolean | undefined;
  /** Values never shown to the model: replaced by `***` wherever they appear in command output. */
  maskedValues?: readonly string[];
}

/** `configurable` key of the run's secret variables (`RunOptions.sandboxSecrets`). */
export const SANDBOX_SECRETS_KEY = 'deerflow_sandbox_secrets';
/** `configurable` key of the run's plain variables (`RunOptions.sandboxVariables`). */
export const SANDBOX_VARIABLES_KEY = 'deerflow_sandbox_variables';
/** `configurable` key of the run's network choice (boolean; an agent's `sandbox.network`). */
export const SANDBOX_NETWORK_KEY = 'deerflow_sandbox_network';

/** The run's variables: string values under valid variable names only. */
function variablesOf(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => /^[A-Z_][A-Z0-9_]*$/.test(entry[0]) && typeof entry[1] === 'string'),
  );
}

/** Longer platform ids are not exported: the value comes from the caller and is informational. */
const MAX_CHANNEL_USER_ID_CHARS = 256;

/**
 * The usual `resolveContext`: thread from `configurable.thread_id` (required), user from
 * `configurable.user_id` (default `default`). Chat runs also carry the sender's raw platform id
 * (`configurable.channel_user_id`), exported to bash as `DEERFLOW_CHANNEL_USER_ID` for that call:
 * in a group thread it tells the senders apart. It is informational, never proof of identity.
 * The run's variables (`SANDBOX_VARIABLES_KEY`) and secrets (`SANDBOX_SECRETS_KEY`) are exported
 * too, the secrets masked in the output; a boolean under `SANDBOX_NETWORK_KEY` sets the network.
 *
 * @throws SandboxError when the run has no thread id or an id has unsafe characters.
 */
export function createContextResolver(options: {
  dataDir: string;
  skillsDir: string;
  /** The sandbox user when the server runs as root (see `SandboxPathsOptions.owner`). */
  owner?: SandboxUser | undefined;
}): (config: RunnableConfig) => SandboxContext {
  return (config) => {
    const threadId = config.configurable?.thread_id;
    const userId = config.configurable?.user_id ?? DEFAULT_USER_ID;
    const channelUserId = config.configurable?.channel_user_id;
    if (typeof threadId !== 'string') throw new SandboxError('the sandbox needs a thread; this run has none');
    if (typeof userId !== 'string') throw new SandboxError('invalid user id');
    const paths = new SandboxPaths({ dataDir: options.dataDir, skillsDir: options.skillsDir, userId, threadId, owner: options.owner });
    const perCallEnv: Record<string, string> = {};
    if (typeof channelUserId === 'string' && channelUserId !== '' && channelUserId.length <= MAX_CHANNEL_USER_ID_CHARS) {
      perCallEnv.DEERFLOW_CHANNEL_USER_ID = channelUserId;
    }
    const variables = variablesOf(config.configurable?.[SANDBOX_VARIABLES_KEY]);
    const secrets = variablesOf(config.configurable?.[SANDBOX_SECRETS_KEY]);
    const network = config.configurable?.[SANDBOX_NETWORK_KEY];
    return {
      paths,
      perCallEnv: { ...perCallEnv, ...variables, ...secrets },
      maskedValues: Object.values(secrets),
      ...(typeof network === 'boolean' ? { isNetworkEnabled: network } : {}),
    };
  };
}
