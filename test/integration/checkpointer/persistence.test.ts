/**
 * DrizzleCheckpointSaver under a real LangGraph graph: a thread resumes across invocations, a
 * fork does not disturb the branch it left, and a PGlite data directory keeps checkpoints
 * across a restart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ERROR, emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../../src/db/index.js';
import { DrizzleCheckpointSaver } from '../../../src/runtime/embedded/checkpointer.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

/** One node that answers every human message with "echo: <text>"; no model involved. */
function echoGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode('echo', (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)?.content)}`)] }))
    .addEdge(START, 'echo')
    .addEdge('echo', END)
    .compile({ checkpointer });
}

const texts = (messages: BaseMessage[]) => messages.map((m) => `${m.getType()}:${String(m.content)}`);
const say = (text: string) => ({ messages: [new HumanMessage(text)] });
const thread = (threadId: string, checkpointId?: string) => ({
  configurable: checkpointId === undefined ? { thread_id: threadId } : { thread_id: threadId, checkpoint_id: checkpointId },
});

describe.each(testDatabaseKinds())('checkpoint persistence on %s', (kind) => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database.close());

  it('resumes a thread: the second invocation sees the first one', async () => {
    const graph = echoGraph(new DrizzleCheckpointSaver(database.db));
    await graph.invoke(say('hello'), thread('resume'));
    const result = await graph.invoke(say('again'), thread('resume'));

    expect(texts(result.messages)).toEqual(['human:hello', 'ai:echo: hello', 'human:again', 'ai:echo: again']);
    // A fresh saver on the same database reads the same state: nothing lives in the saver.
    const state = await echoGraph(new DrizzleCheckpointSaver(database.db)).getState(thread('resume'));
    expect(state.values.messages[1]).toBeInstanceOf(AIMessage);
    expect(texts(state.values.messages)).toHaveLength(4);
  });

  it('forks from an earlier checkpoint without touching the branch it left', async () => {
    const graph = echoGraph(new DrizzleCheckpointSaver(database.db));
    await graph.invoke(say('first'), thread('fork'));
    const afterFirst = (await graph.getState(thread('fork'))).config.configurable?.checkpoint_id as string;
    await graph.invoke(say('second'), thread('fork'));
    const mainLine = (await graph.getState(thread('fork'))).config.configurable?.checkpoint_id as string;

    // The fork takes the same steps as "second" did, so integer channel versions would repeat
    // and the fork's tip would read the main line's stored messages.
    await graph.invoke(say('other'), thread('fork', afterFirst));

    const tip = await graph.getState(thread('fork'));
    expect(tip.parentConfig?.configurable?.checkpoint_id).not.toBe(mainLine);
    expect(texts(tip.values.messages)).toEqual(['human:first', 'ai:echo: first', 'human:other', 'ai:echo: other']);
    const main = await graph.getState(thread('fork', mainLine));
    expect(texts(main.values.messages)).toEqual(['human:first', 'ai:echo: first', 'human:second', 'ai:echo: second']);
  });

  it("keeps a task's first regular writes but replaces its error", async () => {
    const saver = new DrizzleCheckpointSaver(database.db);
    const config = await saver.put(thread('writes'), emptyCheckpoint(), { source: 'input', step: -1, parents: {} }, {});

    await saver.putWrites(config, [['messages', 'first try'], [ERROR, 'boom 1']], 'task');
    await saver.putWrites(config, [['messages', 'retry'], [ERROR, 'boom 2']], 'task');

    // Replay order: the error's slot (-1) sorts before index 0.
    expect((await saver.getTuple(config))?.pendingWrites).toEqual([
      ['task', ERROR, 'boom 2'],
      ['task', 'messages', 'first try'],
    ]);
  });

  it('deletes a thread and nothing else', async () => {
    const saver = new DrizzleCheckpointSaver(database.db);
    const graph = echoGraph(saver);
    await graph.invoke(say('one'), thread('doomed'));
    await graph.invoke(say('two'), thread('kept'));

    await saver.deleteThread('doomed');

    expect(await saver.getTuple(thread('doomed'))).toBeUndefined();
    expect(texts((await graph.getState(thread('kept'))).values.messages)).toEqual(['human:two', 'ai:echo: two']);
  });
});

describe('checkpoint persistence in a PGlite data directory', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'dfc-checkpoints-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('still has the checkpoints after the database is closed and reopened', async () => {
    const first = await openDatabase({ dataDir });
    try {
      await echoGraph(new DrizzleCheckpointSaver(first.db)).invoke(say('before restart'), thread('durable'));
    } finally {
      await first.close();
    }

    const second = await openDatabase({ dataDir });
    try {
      const graph = echoGraph(new DrizzleCheckpointSaver(second.db));
      const result = await graph.invoke(say('after restart'), thread('durable'));
      expect(texts(result.messages)).toEqual([
        'human:before restart',
        'ai:echo: before restart',
        'human:after restart',
        'ai:echo: after restart',
      ]);
    } finally {
      await second.close();
    }
  });
});
