import { desc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { runs, threads } from '../schema/index.js';

export type ListedRunStatus = (typeof runs.$inferSelect)['status'];

/** One run as the operator's list shows it: where it ran and how it ended, never what was said. */
export interface RunSummary {
  id: string;
  threadId: string;
  status: ListedRunStatus;
  /** The platform and chat its thread serves (a channel's or a schedule's), when its metadata says. */
  platform: string | null;
  chatId: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** The stored failure description (secret-free, never the person's text), or null. */
  error: string | null;
}

/** The embedded runtime's runs, newest first, for the operator (a remote runtime keeps its own). */
export class RunListRepo {
  constructor(private readonly db: Database) {}

  /** At most `limit` runs in one of `statuses`, newest first. */
  async list(options: { statuses: readonly ListedRunStatus[]; limit: number }): Promise<RunSummary[]> {
    const source = (key: string) =>
      sql<string | null>`coalesce(${threads.metadata}->'channel_source'->>${key}, ${threads.metadata}->'schedule_source'->>${key})`;
    return this.db
      .select({
        id: runs.id,
        threadId: runs.threadId,
        status: runs.status,
        platform: source('provider'),
        chatId: source('chat_id'),
        createdAt: runs.createdAt,
        startedAt: runs.startedAt,
        finishedAt: runs.finishedAt,
        error: runs.error,
      })
      .from(runs)
      .innerJoin(threads, eq(threads.id, runs.threadId))
      .where(inArray(runs.status, [...options.statuses]))
      .orderBy(desc(runs.createdAt), desc(runs.id))
      .limit(options.limit);
  }
}
