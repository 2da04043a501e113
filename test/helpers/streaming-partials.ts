import type { Reply } from '../../src/channel/types.js';
import type { FakeSlack } from '../fakes/slack/index.js';

/**
 * Streams into every reply at once, as busy replies do (a new partial for each every 100 ms),
 * until each reply's message was updated at least once: however slow the machine, the budget
 * under test decides the pace, not the test. Resolves with the `chat.update` times, in order.
 */
export async function updateTimesWhileStreaming(fake: FakeSlack, replies: readonly Reply[]): Promise<number[]> {
  const startedAt = Date.now();
  let round = 0;
  const timer = setInterval(() => {
    round += 1;
    for (const [i, reply] of replies.entries()) reply.update(`reply ${i} round ${round}`);
  }, 100);
  const updates = () => fake.calls.filter((c) => c.method === 'chat.update' && c.at >= startedAt);
  await fake.waitFor(() => new Set(updates().map((c) => c.params.ts)).size === replies.length, 30_000).finally(() => clearInterval(timer));
  return updates().map((c) => c.at);
}
