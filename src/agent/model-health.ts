import { OpenAIClient } from '@langchain/openai';
import type { ModelConfig } from './config.js';
import { modelTroubleOf } from './model-trouble.js';

/**
 * How one configured model answered the last check: `ok` (the endpoint knows the model),
 * `unreachable` (refused, timed out, no such host), `key_refused` (401/403), `model_missing` (404,
 * or absent from the endpoint's list), `unverified` (reachable and the key accepted, but the
 * endpoint has neither a model route nor a model list), `error` (anything else), or `pending`
 * before the first check ended.
 */
export type ModelCheckStatus = 'pending' | 'ok' | 'unreachable' | 'key_refused' | 'model_missing' | 'unverified' | 'error';

/** One model's check, as `/health` shows it under `model.checks.<name>`. */
export interface ModelCheck {
  status: ModelCheckStatus;
  /** For the operator: what was asked and what came back. Never the key, nor the endpoint's own text (it may echo the key). */
  detail: string;
  /** When the check ended (ISO 8601); null while `pending`. */
  checked_at: string | null;
}

/** Keyed by the model's `name`. */
export type ModelChecks = Record<string, ModelCheck>;

/** A failure the check reads: what the OpenAI client throws (`status`, connection errors, their `cause`). */
type Failure = unknown;

/** The part of the OpenAI client a check uses, so a test can stand in for it. */
export interface ModelEndpoint {
  retrieve(model: string, signal: AbortSignal): Promise<{ id: string }>;
  /** Every model id the endpoint lists (all pages). */
  list(signal: AbortSignal): Promise<string[]>;
}

/**
 * A check waits at most this long (or the model's own timeout, when shorter): a model's timeout
 * is sized for long generations (120 s by default), and nobody waits that long for a health page.
 */
export const CHECK_TIMEOUT_SECONDS = 15;

/** How long a check of `config` waits for an answer, in seconds. */
export function checkTimeoutSeconds(config: ModelConfig): number {
  return Math.min(config.timeout_seconds, CHECK_TIMEOUT_SECONDS);
}

/**
 * The endpoint of `config` through the official OpenAI client, with the model's base URL and key,
 * and {@link checkTimeoutSeconds}. No retries: a check reports what the endpoint does now, and the next check comes soon.
 */
export function openAIEndpoint(config: ModelConfig): ModelEndpoint {
  const client = new OpenAIClient({
    // Local endpoints accept any key; the client refuses to start without one (as createChatModel).
    apiKey: config.api_key ?? 'not-needed',
    ...(config.base_url === undefined ? {} : { baseURL: config.base_url }),
    timeout: checkTimeoutSeconds(config) * 1000,
    maxRetries: 0,
  });
  return {
    retrieve: (model, signal) => client.models.retrieve(model, { signal }),
    list: async (signal) => {
      const ids: string[] = [];
      for await (const model of client.models.list({ signal })) ids.push(model.id);
      return ids;
    },
  };
}

/** The HTTP status the endpoint answered with, if it answered. */
function statusOf(failure: Failure): number | undefined {
  const status = (failure as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The endpoint has no such route (as opposed to no such model): try the next way of asking. */
function isMissingRoute(failure: Failure): boolean {
  const status = statusOf(failure);
  if (status === 405) return true;
  // OpenAI says `model_not_found` for a model it does not have; a server without the route says otherwise.
  return status === 404 && (failure as { code?: unknown }).code !== 'model_not_found';
}

/** The socket-level reason (ECONNREFUSED, ENOTFOUND, ...) somewhere in the cause chain, if any. */
function connectionCodeOf(failure: Failure): string | undefined {
  for (let current = failure, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const { code } = current as { code?: unknown };
    if (typeof code === 'string' && /^E[A-Z_]+$|^UND_ERR/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

function isTimeout(failure: Failure): boolean {
  return failure instanceof Error && (failure.constructor.name === 'APIConnectionTimeoutError' || failure.name === 'TimeoutError');
}

/** What a failed request says, classified with the same mapping the agent's replies use (model-trouble.ts). */
function checkOfFailure(failure: Failure, config: ModelConfig, asked: string): Omit<ModelCheck, 'checked_at'> {
  const status = statusOf(failure);
  switch (modelTroubleOf(failure)) {
    case 'key_refused':
      return { status: 'key_refused', detail: `${asked}: the service refused the key (HTTP ${status ?? 401})` };
    case 'model_unknown':
      return { status: 'model_missing', detail: `${asked}: the service does not know model ${config.model} (HTTP 404)` };
    case 'unreachable': {
      const code = connectionCodeOf(failure);
      const reason = isTimeout(failure)
        ? `no answer within ${checkTimeoutSeconds(config)} s`
        : code === undefined
          ? 'no connection'
          : (CONNECTION_REASONS[code] ?? code);
      return { status: 'unreachable', detail: `${asked}: ${reason}` };
    }
    default:
      return { status: 'error', detail: status === undefined ? `${asked}: the request failed` : `${asked}: the service answered HTTP ${status}` };
  }
}

/**
 * Checks one model: `GET /models/<model>`; when the endpoint has no such route (404 that is not
 * OpenAI's `model_not_found`, or 405), `GET /models` and the model looked up there; when it has
 * neither, `unverified`. Never rejects.
 */
export async function checkModel(config: ModelConfig, endpoint: ModelEndpoint, signal: AbortSignal): Promise<Omit<ModelCheck, 'checked_at'>> {
  const retrieveRoute = `GET /models/${config.model}`;
  try {
    await endpoint.retrieve(config.model, signal);
    return { status: 'ok', detail: `${retrieveRoute}: the service knows the model` };
  } catch (failure) {
    if (!isMissingRoute(failure)) return checkOfFailure(failure, config, retrieveRoute);
  }
  try {
    const ids = await endpoint.list(signal);
    return ids.includes(config.model)
      ? { status: 'ok', detail: `GET /models lists ${config.model} (the service has no per-model route)` }
      : { status: 'model_missing', detail: `GET /models does not list ${config.model} (${ids.length} model${ids.length === 1 ? '' : 's'} listed)` };
  } catch (failure) {
    if (isMissingRoute(failure)) return { status: 'unverified', detail: 'the service answered, but has neither GET /models/<id> nor GET /models' };
    return checkOfFailure(failure, config, 'GET /models');
  }
}

export interface ModelHealthOptions {
  /** The models of `models:` in config.yaml. */
  models: readonly ModelConfig[];
  /** Default {@link openAIEndpoint}. */
  endpointOf?: (config: ModelConfig) => ModelEndpoint;
  /** Default `Date.now`. */
  now?: () => number;
  /** A check asked for sooner than this after the last one began gets that one's result. Default 10 000. */
  minIntervalMs?: number;
}

/** A check starts at most this often; callers in between get the last result. */
export const MODEL_CHECK_MIN_INTERVAL_MS = 10_000;

/**
 * Every configured model's reachability, for `/health`: checked once in the background at start
 * and again on demand. Callers while a check runs share it; a check asked for within
 * `minIntervalMs` of the last one's start gets that one's result, so a busy `/health?check=models`
 * costs the endpoints at most one request per model every 10 s.
 */
export class ModelHealth {
  private readonly endpoints = new Map<string, ModelEndpoint>();
  private readonly now: () => number;
  private readonly minIntervalMs: number;
  private readonly closing = new AbortController();
  private checks: ModelChecks;
  private running: Promise<ModelChecks> | undefined;
  private lastStartedAt: number | undefined;

  constructor(private readonly options: ModelHealthOptions) {
    this.now = options.now ?? Date.now;
    this.minIntervalMs = options.minIntervalMs ?? MODEL_CHECK_MIN_INTERVAL_MS;
    this.checks = Object.fromEntries(options.models.map((m) => [m.name, { status: 'pending', detail: 'the first check has not ended yet', checked_at: null }]));
  }

  /** The last results, without asking anyone (`pending` before the first check ended). */
  status(): ModelChecks {
    return this.checks;
  }

  /**
   * A fresh check of every model, shared with any check under way, or the last results when the
   * last check began less than `minIntervalMs` ago. Never rejects.
   */
  check(): Promise<ModelChecks> {
    if (this.running) return this.running;
    if (this.lastStartedAt !== undefined && this.now() - this.lastStartedAt < this.minIntervalMs) return Promise.resolve(this.checks);
    this.lastStartedAt = this.now();
    const running = this.checkAll().finally(() => {
      this.running = undefined;
    });
    this.running = running;
    return running;
  }

  /** Stops a check under way (its models keep their last results). */
  close(): void {
    this.closing.abort();
  }

  private async checkAll(): Promise<ModelChecks> {
    const results = await Promise.all(
      this.options.models.map(async (config) => {
        const result = await checkModel(config, this.endpointOf(config), this.closing.signal);
        return [config.name, { ...result, checked_at: new Date(this.now()).toISOString() }] as const;
      }),
    );
    if (!this.closing.signal.aborted) this.checks = Object.fromEntries(results);
    return this.checks;
  }

  private endpointOf(config: ModelConfig): ModelEndpoint {
    let endpoint = this.endpoints.get(config.name);
    if (!endpoint) {
      endpoint = (this.options.endpointOf ?? openAIEndpoint)(config);
      this.endpoints.set(config.name, endpoint);
    }
    return endpoint;
  }
}
