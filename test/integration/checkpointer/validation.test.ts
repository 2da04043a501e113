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
import type { DatabaseHandle } from '../../../src/db/index.js';
import { DrizzleCheckpointSaver } from '../../../src/runtime/embedded/checkpointer.js';
import { openTestDatabase, type TestDatabaseKind, testDatabaseKinds } from '../../helpers/database.js';

function initializer(kind: TestDatabaseKind): CheckpointSaverTestInitializer<DrizzleCheckpointSaver> {
  const databases = new Map<DrizzleCheckpointSaver, DatabaseHandle>();
  return {
    checkpointerName: `DrizzleCheckpointSaver (${kind})`,
    // The suite expects every saver to start empty: each gets a database of its own.
    async createCheckpointer() {
      const database = await openTestDatabase(kind);
      const saver = new DrizzleCheckpointSaver(database.db);
      databases.set(saver, database);
      return saver;
    },
    async destroyCheckpointer(saver) {
      await databases.get(saver)?.close();
      databases.delete(saver);
    },
  };
}

for (const kind of testDatabaseKinds()) {
  validate(initializer(kind));
  // Opt-in upstream (Beta API), but our saver must return writes in the order it replays them.
  deltaChannelHistoryTests(initializer(kind));
}
