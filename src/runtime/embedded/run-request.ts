import { GraphRecursionError } from '@langchain/langgraph';
import type { ModelConfig } from '../../agent/config.js';
import type { TurnAccess } from '../../agent/lead-agent.js';
import { MODEL_TROUBLE_MESSAGES, modelTroubleOf } from '../../agent/model-trouble.js';
import type { BashAccess } from '../../agent/sandbox/config.js';
import { AgentError, AppError } from '../../errors.js';
import { SCHEDULE_ORIGIN_CONTEXT_KEY } from '../../schedules/types.js';
import { DEFAULT_USER_ID, type RunRequest } from '../types.js';

/** Reading a run request: ids, the run's user, model and access, and how its failures read. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function assertUuid(value: string, name: string): void {
  if (!UUID.test(value)) throw new AppError('BAD_REQUEST', `${name} is not a UUID`, { status: 400, userMessage: `${name} must be a UUID` });
}

/** The storage user of a run: sandbox folders and memory are keyed by it (reference §4.5). */
export function runUserId(request: RunRequest): string {
  const fromRequest = request.context?.user_id ?? request.config?.configurable?.user_id;
  return typeof fromRequest === 'string' && fromRequest !== '' ? fromRequest : DEFAULT_USER_ID;
}

/** The chat sender's raw platform id, for `DEERFLOW_CHANNEL_USER_ID` in bash (chat runs only). */
export function channelUserIdOf(request: RunRequest): { channel_user_id?: string } {
  const id = request.context?.channel_user_id;
  return typeof id === 'string' ? { channel_user_id: id } : {};
}

/** The run's model: `configurable.model_name` or `context.model_name`, else the first configured. */
export function resolveModel(models: readonly ModelConfig[], request: RunRequest): ModelConfig {
  if (models.length === 0) {
    throw new AgentError('MODEL_NOT_CONFIGURED', 'no model configured', {
      status: 503,
      userMessage: 'No model is configured on this server. Ask the operator to add one under `models:` in config.yaml.',
    });
  }
  const wanted = request.config?.configurable?.model_name ?? request.context?.model_name;
  if (wanted === undefined) return models[0] as ModelConfig;
  const match = models.find((m) => m.name === wanted);
  if (!match) throw new AppError('BAD_REQUEST', 'unknown model', { status: 400, userMessage: `Unknown model: ${String(wanted)}` });
  return match;
}

/**
 * Whether `bash` runs isolated from the server and from other accounts (the sandbox's probe).
 * `isIsolationExplicit`: the operator chose `sandbox.isolation: none` on purpose, accepting an
 * unisolated shell for everyone `sandbox.bash_access` names.
 */
export interface ShellIsolation {
  isShellIsolated: boolean;
  isIsolationExplicit: boolean;
}

/** Assumed when the runtime is told nothing: no isolation, and nobody chose that. */
export const UNKNOWN_SHELL_ISOLATION: ShellIsolation = { isShellIsolated: false, isIsolationExplicit: false };

/**
 * Who gets `bash`, from server-set facts only. `context.trusted_sender` is the server's decision
 * for this run: the gateway sets it from the principal (operator, or a user's shell grant) and
 * the manager from the sender (operator-listed in `allowed_users`, or bound to a granted user);
 * absent means an in-process caller, which is trusted. `everyone` also gives strangers the shell,
 * but only where it is isolated or the operator explicitly chose no isolation; otherwise it
 * degrades to the trusted senders, so an unisolated shell never reaches an unvetted sender.
 */
export function accessFor(policy: BashAccess, request: RunRequest, isolation: ShellIsolation = UNKNOWN_SHELL_ISOLATION): TurnAccess {
  const isTrusted = isTrustedSender(request);
  const isEveryoneSafe = isolation.isShellIsolated || isolation.isIsolationExplicit;
  const bash = policy === 'everyone' ? isTrusted || isEveryoneSafe : policy === 'trusted' && isTrusted;
  return { bash, clarification: request.context?.disable_clarification !== true };
}

/**
 * Whether the run's sender is trusted (`context.trusted_sender`, set by the manager from routed
 * facts): callers of the API and chat senders the manager vouched for are; others are not.
 */
export function isTrustedSender(request: RunRequest): boolean {
  return request.context?.trusted_sender !== false;
}

/** Model and graph failures, described without the endpoint's text (it may echo keys or prompts). */
export function toAgentError(error: unknown, recursionLimit: number): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof GraphRecursionError) {
    return new AgentError('RECURSION_LIMIT', `run stopped at the recursion limit (${recursionLimit})`, {
      status: 500,
      userMessage: `I stopped after ${recursionLimit} steps without finishing this task. Tell me to continue, or break the task into smaller steps.`,
      cause: error,
    });
  }
  const status = (error as { status?: unknown }).status;
  const name = error instanceof Error ? error.name : 'Error';
  const detail = typeof status === 'number' ? `${name} (HTTP ${status})` : name;
  const trouble = modelTroubleOf(error);
  if (trouble !== undefined) {
    return new AgentError('MODEL_UNAVAILABLE', `model call failed: ${trouble}, ${detail}`, { status: 502, userMessage: MODEL_TROUBLE_MESSAGES[trouble], cause: error });
  }
  return new AgentError('MODEL_FAILED', `agent run failed: ${detail}`, {
    status: 502,
    userMessage: 'The agent run failed. Please try again.',
    cause: error,
  });
}

/** The chat a chat turn's schedules answer into (`context.schedule_origin`, set by the manager), when the request names one. */
export function scheduleOriginIn(request: RunRequest): Record<string, unknown> | undefined {
  const origin = request.context?.[SCHEDULE_ORIGIN_CONTEXT_KEY];
  return typeof origin === 'object' && origin !== null && !Array.isArray(origin) ? (origin as Record<string, unknown>) : undefined;
}
