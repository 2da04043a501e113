import { Redis } from 'ioredis';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type Topic, TopicListeners } from './topic.js';
import type { JsonValue } from './types.js';

/**
 * {@link Topic}s over Redis pub/sub: one Redis channel per topic (`<prefix>:topic:<platform>:<name>`),
 * two connections per process opened with the first topic. An event published while Redis is
 * away is dropped (topics are best effort: what matters is in the database already).
 */
export class RedisTopics {
  private readonly topics = new Map<string, TopicListeners>();
  private connections: { publisher: Redis; subscriber: Redis } | undefined;
  private isClosed = false;

  constructor(private readonly options: { url: string; prefix: string; logger: Logger }) {}

  topic(platform: string, name: string): Topic {
    const channel = `${this.options.prefix}:topic:${platform}:${name}`;
    const { publisher, subscriber } = this.connect();
    let listeners = this.topics.get(channel);
    if (!listeners) {
      listeners = new TopicListeners();
      this.topics.set(channel, listeners);
      subscriber.subscribe(channel).catch((error: unknown) => {
        if (!this.isClosed) this.options.logger.warn({ err: describeError(error), platform, topic: name }, 'live events not subscribed: open pages see replies once they look again');
      });
    }
    const local = listeners;
    return {
      publish: (key, event) => {
        publisher.publish(channel, JSON.stringify({ key, event })).catch(() => undefined);
      },
      subscribe: (key, listener) => local.subscribe(key, listener),
    };
  }

  async close(): Promise<void> {
    this.isClosed = true;
    this.connections?.publisher.disconnect();
    this.connections?.subscriber.disconnect();
  }

  private connect(): { publisher: Redis; subscriber: Redis } {
    if (this.connections) return this.connections;
    const { url, logger } = this.options;
    // A live event is worth sending now or not at all: nothing queues while Redis is away.
    const publisher = new Redis(url, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
    // ioredis subscribes again after every reconnect.
    const subscriber = new Redis(url, { maxRetriesPerRequest: null });
    for (const connection of [publisher, subscriber]) {
      connection.on('error', (error: unknown) => logger.debug({ err: describeError(error) }, 'Redis connection error (live events)'));
    }
    subscriber.on('message', (channel: string, payload: string) => {
      const listeners = this.topics.get(channel);
      if (!listeners) return;
      let parsed: { key?: unknown; event?: JsonValue };
      try {
        parsed = JSON.parse(payload) as { key?: unknown; event?: JsonValue };
      } catch {
        return;
      }
      if (typeof parsed.key === 'string' && parsed.event !== undefined) listeners.deliver(parsed.key, parsed.event);
    });
    this.connections = { publisher, subscriber };
    return this.connections;
  }
}
