/**
 * Long conversations in DrizzleCheckpointSaver: a turn stores only the messages it added (an
 * `append:<base>` row on the list it extends), every few turns the whole list again, and a saver
 * that never saw the thread (another process, a restart) reads the same history from the rows.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { checkpointBlobs } from '../../../src/db/schema/checkpoints.js';
import { DrizzleCheckpointSaver } from '../../../src/runtime/embedded/checkpointer.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

function echoGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode('echo', (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)?.content)}`)] }))
    .addEdge(START, 'echo')
    .addEdge('echo', END)
    .compile({ checkpointer });
}

const texts = (messages: BaseMessage[]) => messages.map((m) => `${m.getType()}:${String(m.content)}`);

/** `turns` turns on one thread, each run as the runtime runs it (one checkpoint at the end). */
async function converse(saver: BaseCheckpointSaver, threadId: string, turns: number, from = 0): Promise<void> {
  const graph = echoGraph(saver);
  for (let turn = from; turn < from + turns; turn++) {
    await graph.invoke({ messages: [new HumanMessage(`turn ${turn}`)] }, { configurable: { thread_id: threadId }, durability: 'exit' });
  }
}

async function latestMessages(saver: BaseCheckpointSaver, threadId: string): Promise<BaseMessage[]> {
  const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
  return (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
}

describe.each(testDatabaseKinds())('message lists in checkpoints on %s', (kind) => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database.close());

  async function messageRows(threadId: string) {
    return database.db
      .select({ type: checkpointBlobs.type, blob: checkpointBlobs.blob })
      .from(checkpointBlobs)
      .where(and(eq(checkpointBlobs.threadId, threadId), eq(checkpointBlobs.channel, 'messages')));
  }

  it('stores a turn as the messages it appended, and the whole list again every twentieth turn', async () => {
    const saver = new DrizzleCheckpointSaver(database.db);
    await converse(saver, 'long-1', 25);
    const types = (await messageRows('long-1')).map((row) => (row.type.startsWith('append:') ? 'append' : row.type));
    expect(types.filter((type) => type === 'json')).toHaveLength(2);
    expect(types.filter((type) => type === 'append')).toHaveLength(23);
    expect(texts(await latestMessages(saver, 'long-1'))).toHaveLength(50);
  });

  it('reads the same history in a saver that never saw the thread, and goes on from it', async () => {
    const writer = new DrizzleCheckpointSaver(database.db);
    await converse(writer, 'long-2', 7);
    const expected = texts(await latestMessages(writer, 'long-2'));
    const reader = new DrizzleCheckpointSaver(database.db);
    expect(texts(await latestMessages(reader, 'long-2'))).toEqual(expected);
    await converse(reader, 'long-2', 2, 7);
    const after = texts(await latestMessages(new DrizzleCheckpointSaver(database.db), 'long-2'));
    expect(after).toEqual([...expected, 'human:turn 7', 'ai:echo: turn 7', 'human:turn 8', 'ai:echo: turn 8']);
    // Every checkpoint of the history reads back whole, newest first.
    const counts: number[] = [];
    for await (const tuple of reader.list({ configurable: { thread_id: 'long-2' } })) {
      counts.push(((tuple.checkpoint.channel_values.messages ?? []) as BaseMessage[]).length);
    }
    expect(counts.filter((count) => count > 0)).toEqual([18, 16, 14, 12, 10, 8, 6, 4, 2]);
  });

  it('stores a whole list with the bytes the serde writes for it', async () => {
    const saver = new DrizzleCheckpointSaver(database.db);
    await converse(saver, 'long-3', 1);
    const [row] = await messageRows('long-3');
    const [, expected] = await new JsonPlusSerializer().dumpsTyped(await latestMessages(new DrizzleCheckpointSaver(database.db), 'long-3'));
    expect(row?.type).toBe('json');
    expect(Buffer.from(row?.blob ?? new Uint8Array()).equals(Buffer.from(expected))).toBe(true);
  });
});
