import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisTopics } from '../../../src/channel/redis-topics.js';
import type { JsonValue } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { loadScaledMs } from '../../helpers/load-scaled-timer.js';

/** Live events over real Redis (`REDIS_URL`): two `RedisTopics` with one prefix are two processes. */

const redisUrl = process.env.REDIS_URL || undefined;

/** Publishes `event` every 50 ms until `received` holds it: a subscription starts a moment after it is asked for. */
async function publishUntilSeen(publish: () => void, received: JsonValue[]): Promise<void> {
  const deadline = Date.now() + loadScaledMs(10_000);
  while (received.length === 0) {
    if (Date.now() > deadline) throw new Error('no live event arrived through Redis');
    publish();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!redisUrl)('RedisTopics', () => {
  const opened: RedisTopics[] = [];
  const aProcess = (prefix: string) => {
    const topics = new RedisTopics({ url: redisUrl as string, prefix, logger: silentLogger() });
    opened.push(topics);
    return topics;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((topics) => topics.close()));
  });

  it("carries an event from one process to another's listeners of that key, and no other key's or deployment's", async () => {
    const prefix = `test-${randomUUID()}`;
    const sender = aProcess(prefix).topic('web', 'replies');
    const receiver = aProcess(prefix).topic('web', 'replies');
    const otherDeployment = aProcess(`test-${randomUUID()}`).topic('web', 'replies');
    const seen: JsonValue[] = [];
    const otherKey: JsonValue[] = [];
    const elsewhere: JsonValue[] = [];
    receiver.subscribe('conversation-1', (event) => seen.push(event));
    receiver.subscribe('conversation-2', (event) => otherKey.push(event));
    otherDeployment.subscribe('conversation-1', (event) => elsewhere.push(event));

    await publishUntilSeen(() => sender.publish('conversation-1', { type: 'partial', text: 'hi' }), seen);
    expect(seen[0]).toEqual({ type: 'partial', text: 'hi' });
    expect(otherKey).toEqual([]);
    expect(elsewhere).toEqual([]);
  });
});
