import type { FastifyReply } from 'fastify';
import type { HostedChats } from '../../src/channel/hosted-chats.js';
import type { Topic } from '../../src/channel/topic.js';
import type { JsonValue } from '../../src/channel/types.js';
import { clientGoneSignal, openSseStream } from '../../src/gateway/sse.js';
import { WEB_LIMITS } from './limits.js';
import { type LiveEvent, type MessageJson, messageJson } from './wire.js';


/**
 * A conversation's event stream for an open page (`GET …/events`): `message` frames (a message
 * new to the page, or the final of a reply it saw start) and `partial` frames (a reply's text so
 * far), each message once in its final form and in order. It starts with the messages after
 * `afterId` from the database, then follows live events; since those are best effort, it also
 * reads the database every `WEB_LIMITS.eventStreamRecheckMs` for what they left out. Ends when
 * the page goes away.
 */
export async function streamConversation(
  reply: FastifyReply,
  options: { chats: HostedChats; topic: Topic; conversationId: string; afterId: number },
): Promise<void> {
  const { chats, topic, conversationId } = options;
  const gone = clientGoneSignal(reply);
  const writer = openSseStream(reply);
  let lastId = options.afterId;
  /** Replies the page saw start and not yet end. */
  const unfinished = new Set<number>();
  let writes = Promise.resolve(true);
  const send = (event: string, data: JsonValue) => {
    writes = writes.then((isOpen) => (isOpen ? writer.write({ event, data }) : false));
  };
  const offer = (message: MessageJson) => {
    const id = message.id;
    if (id <= lastId && !unfinished.has(id)) return;
    lastId = Math.max(lastId, id);
    if (message.is_final === false) unfinished.add(id);
    else unfinished.delete(id);
    send('message', message);
  };
  const onLive = (event: JsonValue) => {
    const live = event as LiveEvent;
    if (live.type === 'message' && typeof live.message?.id === 'number') offer(live.message);
    else if (live.type === 'partial' && unfinished.has(live.message_id)) send('partial', { message_id: live.message_id, text: live.text });
  };
  const catchUp = async () => {
    const from = Math.min(lastId, ...[...unfinished].map((id) => id - 1));
    for (const message of await chats.messages(conversationId, { afterId: from, limit: WEB_LIMITS.transcriptPage })) {
      if (message.id > lastId || message.isFinal) offer(messageJson(message));
    }
  };
  // Subscribed before the first read, so nothing published in between is missed; held until the
  // read is sent, so the page gets the messages in order.
  let held: JsonValue[] | undefined = [];
  const unsubscribe = topic.subscribe(conversationId, (event) => (held ? held.push(event) : onLive(event)));
  const recheck = setInterval(() => void catchUp().catch(() => undefined), WEB_LIMITS.eventStreamRecheckMs);
  const keepAlive = setInterval(() => send('ping', null), WEB_LIMITS.eventStreamKeepAliveMs);
  try {
    send('ready', { conversation_id: conversationId });
    await catchUp().catch(() => undefined);
    for (const event of held) onLive(event);
    held = undefined;
    await new Promise<void>((resolve) => {
      if (gone.aborted) resolve();
      else gone.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    unsubscribe();
    clearInterval(recheck);
    clearInterval(keepAlive);
    writer.end();
  }
}
