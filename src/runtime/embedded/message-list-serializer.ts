import type { BaseMessage } from '@langchain/core/messages';
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';

const [LEFT_BRACKET, COMMA, RIGHT_BRACKET] = new TextEncoder().encode('[,]') as unknown as [number, number, number];

/**
 * Serializes message lists as LangGraph's `JsonPlusSerializer` does, reusing each message's bytes
 * from the last time it was stored: the JSON of an array is its items' JSON joined with commas,
 * so the bytes are the same, and a turn serializes only its new messages. A message's bytes are
 * kept while the message object lives (LangGraph never changes a stored message, it replaces it).
 */
export class MessageListSerializer {
  private readonly serialized = new WeakMap<BaseMessage, Uint8Array>();

  /** @param serde The default `JsonPlusSerializer`; another serde may not compose this way. */
  constructor(private readonly serde: SerializerProtocol) {}

  /** `['json', bytes]`, or `undefined` when a message does not serialize to JSON (use the serde on the whole list). */
  async dumps(messages: readonly BaseMessage[]): Promise<[string, Uint8Array] | undefined> {
    const parts: Uint8Array[] = [];
    for (const message of messages) {
      let part = this.serialized.get(message);
      if (part === undefined) {
        const [type, bytes] = await this.serde.dumpsTyped(message);
        if (type !== 'json') return undefined;
        part = bytes;
        this.serialized.set(message, part);
      }
      parts.push(part);
    }
    const joined = new Uint8Array(parts.reduce((length, part) => length + part.length + 1, 1));
    let at = 0;
    for (const part of parts) {
      joined[at] = at === 0 ? LEFT_BRACKET : COMMA;
      joined.set(part, at + 1);
      at += part.length + 1;
    }
    joined[at] = RIGHT_BRACKET;
    return ['json', joined];
  }
}
