import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';
import type { TokenUsage } from '../../db/schema/index.js';

/**
 * A LangChain message as LangGraph servers put it on the wire: its stored data plus `type`, i.e.
 * `message.toDict().data` with `type`.
 *
 * It runs for every token of a streamed answer (the `messages` mode), so a text message takes a
 * short way: its constructor fields, read from the message as `toJSON` reads them. `toJSON` also
 * walks every value, copying each object and escaping those that look like LangChain's own
 * serialized form (for `load`, which the wire's readers never call), and resolves aliases and
 * secrets that messages do not have; that walk was ~2% of a run's CPU. The values are the
 * message's own (shared, like the `values` dicts: do not mutate them). Content blocks (pictures,
 * files) still go through `toDict`.
 */
export function serializeMessage(message: BaseMessage): Record<string, unknown> {
  if (typeof message.content !== 'string') return { ...message.toDict().data, type: message.getType() };
  const fields = message.lc_kwargs as Record<string, unknown>;
  const own = message as unknown as Record<string, unknown>;
  const dict: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) dict[key] = key in message ? own[key] : fields[key];
  dict.type = message.getType();
  return dict;
}

/**
 * The wire form of each message in graph state, kept while the message lives. A run emits the
 * whole state after every step and a thread's history is the same message objects from step to
 * step, so without it every `values` event re-serializes the history: the cost of a turn would
 * grow with the conversation. Callers treat the dicts as read-only (they are shared between events).
 */
const stateMessageDicts = new WeakMap<BaseMessage, Record<string, unknown>>();

function serializeStateMessage(message: BaseMessage): Record<string, unknown> {
  let dict = stateMessageDicts.get(message);
  if (dict === undefined) {
    dict = serializeMessage(message);
    stateMessageDicts.set(message, dict);
  }
  return dict;
}

/** Graph state with messages made JSON-safe (the message dicts are shared: do not mutate them). */
export function serializeValues(values: unknown): Record<string, unknown> {
  if (values === null || typeof values !== 'object') return {};
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [
      key,
      Array.isArray(value) ? value.map((item) => (isBaseMessage(item) ? serializeStateMessage(item) : item)) : value,
    ]),
  );
}

/** Only the metadata keys clients use; the rest holds callbacks and config that are not JSON. */
export function pickStreamMetadata(metadata: unknown): Record<string, unknown> {
  if (metadata === null || typeof metadata !== 'object') return {};
  const picked: Record<string, unknown> = {};
  // `for…in` rather than `Object.entries`: this ran for every streamed token, and the metadata
  // has a few dozen keys (the whole run config), so the pairs' arrays were most of its cost.
  for (const key in metadata) {
    if (!(key.startsWith('langgraph_') || key.startsWith('ls_') || key === 'thread_id' || key === 'run_id')) continue;
    if (!Object.hasOwn(metadata, key)) continue;
    const value = (metadata as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') picked[key] = value;
  }
  return picked;
}

/**
 * {@link pickStreamMetadata} for a stream of tokens: LangGraph hands every token of one model
 * call the same metadata object (Undocumented: `StreamMessagesHandler` keeps one per call), so
 * it is picked once per call; a new object is picked anew.
 */
export function streamMetadataPicker(): (metadata: unknown) => Record<string, unknown> {
  let seen: unknown;
  let picked = pickStreamMetadata(seen);
  return (metadata) => {
    if (metadata !== seen) {
      seen = metadata;
      picked = pickStreamMetadata(metadata);
    }
    return picked;
  };
}

/** Token counts of the AI messages after the last human message: this run's usage. */
export function usageOfLastTurn(messages: readonly BaseMessage[]): TokenUsage | undefined {
  let usage: TokenUsage | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as BaseMessage;
    if (message.getType() === 'human') break;
    const counts = (message as { usage_metadata?: TokenUsage }).usage_metadata;
    if (!counts) continue;
    usage ??= { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    usage.input_tokens += counts.input_tokens;
    usage.output_tokens += counts.output_tokens;
    usage.total_tokens += counts.total_tokens;
  }
  return usage;
}

/** An `updates` chunk: each node's update serialized like `values`. */
export function serializeUpdates(chunk: unknown): Record<string, unknown> {
  if (chunk === null || typeof chunk !== 'object') return {};
  return Object.fromEntries(Object.entries(chunk).map(([node, update]) => [node, serializeValues(update)]));
}
