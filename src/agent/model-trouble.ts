/**
 * What went wrong between the server and a model's endpoint, when a person can be told more than
 * "an error occurred": the key refused, the model unknown there, the endpoint out of reach or
 * rate limiting. Read from what `@langchain/openai` throws (the OpenAI SDK's `status`, LangChain's
 * `lc_error_code`, the SDK's connection error names), also through a `cause`. Pure.
 */
export type ModelTrouble = 'key_refused' | 'model_unknown' | 'rate_limited' | 'unreachable';

/** What a person reads for each; details (which model, which endpoint) go to the operator's log only. */
export const MODEL_TROUBLE_MESSAGES: Record<ModelTrouble, string> = {
  key_refused: "The model service refused this server's key. Ask the operator to check the model's api_key.",
  model_unknown: 'The model service does not know the configured model. Ask the operator to check models[].model.',
  rate_limited: 'The model service is rate limiting this server right now. Please try again in a minute.',
  unreachable: 'The model service cannot be reached right now. Please try again in a moment.',
};

/** The OpenAI SDK's errors for a request that got no answer (refused, reset, timed out). */
const CONNECTION_ERRORS = new Set(['APIConnectionError', 'APIConnectionTimeoutError', 'TimeoutError', 'FetchError']);
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The trouble `error` shows, or undefined for any other failure (a 5xx, a bug): those get the generic reply. */
export function modelTroubleOf(error: unknown): ModelTrouble | undefined {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 4; depth++) {
    const { status, lc_error_code: lcCode, name, code } = current as { status?: unknown; lc_error_code?: unknown; name?: unknown; code?: unknown };
    if (status === 401 || status === 403 || lcCode === 'MODEL_AUTHENTICATION') return 'key_refused';
    if (status === 404 || lcCode === 'MODEL_NOT_FOUND') return 'model_unknown';
    if (status === 429 || lcCode === 'MODEL_RATE_LIMIT') return 'rate_limited';
    // The SDK's connection errors keep `name` 'Error': their class says what they are.
    const isConnectionError = [name, current.constructor?.name].some((label) => typeof label === 'string' && CONNECTION_ERRORS.has(label));
    if (isConnectionError || (typeof code === 'string' && CONNECTION_CODES.has(code))) return 'unreachable';
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
