import { describe, expect, it } from 'vitest';
import { InProcessTopic } from '../../../src/channel/topic.js';
import type { JsonValue } from '../../../src/channel/types.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('InProcessTopic', () => {
  it("delivers an event to the key's listeners only, after publish returns, until they unsubscribe", async () => {
    const topic = new InProcessTopic();
    const a: JsonValue[] = [];
    const b: JsonValue[] = [];
    const stopA = topic.subscribe('a', (event) => a.push(event));
    topic.subscribe('b', (event) => b.push(event));
    topic.publish('a', { n: 1 });
    expect(a).toEqual([]);
    await tick();
    expect(a).toEqual([{ n: 1 }]);
    expect(b).toEqual([]);
    stopA();
    topic.publish('a', { n: 2 });
    await tick();
    expect(a).toEqual([{ n: 1 }]);
  });

  it('keeps delivering to the other listeners when one throws', async () => {
    const topic = new InProcessTopic();
    const seen: JsonValue[] = [];
    topic.subscribe('k', () => {
      throw new Error('a page went away');
    });
    topic.subscribe('k', (event) => seen.push(event));
    topic.publish('k', 'x');
    await tick();
    expect(seen).toEqual(['x']);
  });
});
