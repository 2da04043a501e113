/**
 * LangGraph's official conformance suite for checkpoint savers, run against DrizzleCheckpointSaver
 * once per database kind. Its CLI is broken in 1.1.1, so the library form is used; its spec files
 * call vitest's global describe/it/expect (`globals: true` in vitest.config.ts).
 */
import {
  type CheckpointSaverTestInitializer,
  deltaChannelHistoryTests,
  validate,
} from '@langchain/langgraph-checkpoint-validation';
import { sql } from 'drizzle-orm';
import { afterAll } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { DrizzleCheckpointSaver } from '../../../src/runtime/embedded/checkpointer.js';
import { openTestDatabase, type TestDatabaseKind, testDatabaseKinds } from '../../helpers/database.js';

/**
 * The suite expects every saver to start empty. Its ~700 cases per kind each used to get a database
 * of their own, which made this the longest file of `npm test` by minutes; now a saver gets the
 * kind's one database with the checkpoint tables emptied, and only a saver made while another is
 * still open gets a database of its own.
 */
function initializer(kind: TestDatabaseKind): CheckpointSaverTestInitializer<DrizzleCheckpointSaver> {
  let shared: DatabaseHandle | undefined;
  let sharedSaver: DrizzleCheckpointSaver | undefined;
  const ownDatabases = new Map<DrizzleCheckpointSaver, DatabaseHandle>();
  afterAll(async () => {
    await shared?.close();
  });
  return {
    checkpointerName: `DrizzleCheckpointSaver (${kind})`,
    async createCheckpointer() {
      if (sharedSaver !== undefined) {
        const database = await openTestDatabase(kind);
        const saver = new DrizzleCheckpointSaver(database.db);
        ownDatabases.set(saver, database);
        return saver;
      }
      shared ??= await openTestDatabase(kind);
      await shared.db.execute(sql`truncate checkpoint_writes, checkpoint_blobs, checkpoints`);
      sharedSaver = new DrizzleCheckpointSaver(shared.db);
      return sharedSaver;
    },
    async destroyCheckpointer(saver) {
      if (saver === sharedSaver) {
        sharedSaver = undefined;
        return;
      }
      await ownDatabases.get(saver)?.close();
      ownDatabases.delete(saver);
    },
  };
}

for (const kind of testDatabaseKinds()) {
  validate(initializer(kind));
  // Opt-in upstream (Beta API), but our saver must return writes in the order it replays them.
  deltaChannelHistoryTests(initializer(kind));
}
