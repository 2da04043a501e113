import { and, desc, eq, getTableColumns, inArray, notInArray, sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../../db/index.js';
import { ReadCache } from '../../db/read-cache.js';
import { memoryFacts, memoryProfiles } from '../../db/schema/index.js';
import type { MemoryChanges, MemoryFact, MemorySummaries, MemoryUpdate, ProposedFact, UserMemory } from './types.js';

/** What a user without a profile has: nothing known yet. */
export const EMPTY_SUMMARIES: Readonly<MemorySummaries> = Object.freeze({ workContext: '', personalContext: '', topOfMind: '' });

const SUMMARY_KEYS = ['workContext', 'personalContext', 'topOfMind'] as const satisfies ReadonlyArray<keyof MemorySummaries>;

/** Fact ids are uuids; anything else would make Postgres reject the whole statement. */
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ApplyMemoryOptions {
  /** Recorded on new facts: the thread id they were learned in. Never message text. */
  source: string;
  /** Most facts the user keeps after this update; the lowest confidence (then oldest) go first. */
  maxFacts: number;
  /** New facts with a lower confidence (0..1) are dropped. */
  confidenceThreshold: number;
  /** `created_at` of the new facts. */
  now: Date;
}

/**
 * Per-user memory in the database (`memory_facts`, `memory_profiles`). Every statement is scoped
 * by user id: nothing of one user is ever read or changed on behalf of another.
 * Database failures are thrown as the driver's errors, whose messages may hold query
 * parameters (fact text): log their name and SQLSTATE, not their message.
 */
export class MemoryStore {
  private readonly cache: ReadCache<UserMemory>;

  /**
   * @param options.cachedUsers Users whose memory is kept in this process between turns (see
   *   `ReadCache`): only where this process alone writes the database (PGlite), and then every
   *   write of memory must go through this one store. Default 0: every `get` reads the database.
   */
  constructor(
    private readonly db: Database,
    options: { cachedUsers?: number } = {},
  ) {
    this.cache = new ReadCache(options.cachedUsers ?? 0);
  }

  /**
   * The user's summaries (empty strings when unknown) and facts, newest first: it runs before
   * every turn. The result is shared with other callers (read-only).
   */
  get(userId: string): Promise<UserMemory> {
    return this.cache.read(userId, () => this.load(userId));
  }

  /**
   * One statement. The one-row `values` keeps a row for a user with a profile but no facts, or
   * neither.
   */
  private async load(userId: string): Promise<UserMemory> {
    const rows = await this.db
      .select({ summaries: memoryProfiles.summaries, fact: getTableColumns(memoryFacts) })
      .from(sql`(values (1)) as ${sql.identifier('one')}(${sql.identifier('row')})`)
      .leftJoin(memoryProfiles, eq(memoryProfiles.userId, userId))
      .leftJoin(memoryFacts, eq(memoryFacts.userId, userId))
      .orderBy(desc(memoryFacts.createdAt), desc(memoryFacts.confidence), desc(memoryFacts.id));
    return {
      summaries: { ...EMPTY_SUMMARIES, ...rows[0]?.summaries },
      facts: rows.flatMap(({ fact }): MemoryFact[] =>
        fact === null
          ? []
          : [{ id: fact.id, content: fact.content, category: fact.category, confidence: fact.confidence, source: fact.source, createdAt: fact.createdAt }],
      ),
    };
  }

  /** Forgets everything about the user (facts and summaries); resolves to the number of facts removed. */
  clear(userId: string): Promise<number> {
    return this.cache.write(userId, () => this.clearStored(userId));
  }

  private clearStored(userId: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const removed = await tx.delete(memoryFacts).where(eq(memoryFacts.userId, userId)).returning({ id: memoryFacts.id });
      await tx.delete(memoryProfiles).where(eq(memoryProfiles.userId, userId));
      return removed.length;
    });
  }

  /**
   * Forgets one fact, only among this user's: `false` when the user has no fact with that id
   * (unknown, malformed, or another user's), so a caller cannot tell another's fact from none.
   */
  deleteFact(userId: string, factId: string): Promise<boolean> {
    if (!UUID_PATTERN.test(factId)) return Promise.resolve(false);
    return this.cache.write(userId, async () => {
      const removed = await this.db
        .delete(memoryFacts)
        .where(and(eq(memoryFacts.userId, userId), eq(memoryFacts.id, factId)))
        .returning({ id: memoryFacts.id });
      return removed.length > 0;
    });
  }

  /**
   * Applies one extraction result in a single transaction, in this order:
   * 1. each summary the update gives non-blank replaces the stored one (blank or absent keeps it);
   * 2. `factsToRemove` ids are deleted, only among this user's facts (unknown or malformed ids are ignored);
   * 3. new facts are trimmed and dropped when empty, out of 0..1, below `confidenceThreshold`,
   *    repeated within the update (the most confident copy is kept) or already stored (same trimmed
   *    content; the unique index decides, so concurrent processes cannot duplicate a fact);
   * 4. the user's facts are capped at `maxFacts`, keeping the highest confidence, then the newest.
   *
   * Updates of one user are serialized with a transaction-scoped advisory lock, so the cap and
   * the summary merge hold across processes.
   *
   * @throws the driver's error when the database fails; nothing is changed then.
   */
  apply(userId: string, update: MemoryUpdate, options: ApplyMemoryOptions): Promise<MemoryChanges> {
    return this.cache.write(userId, () => this.applyStored(userId, update, options));
  }

  private applyStored(userId: string, update: MemoryUpdate, options: ApplyMemoryOptions): Promise<MemoryChanges> {
    const summaries = nonBlankSummaries(update.summaries);
    const newFacts = admissibleFacts(update.newFacts, options.confidenceThreshold);
    const idsToRemove = [...new Set(update.factsToRemove.filter((id) => UUID_PATTERN.test(id)))];

    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`memory:${userId}`}, 0))`);

      const summariesUpdated = Object.keys(summaries).length;
      if (summariesUpdated > 0) {
        await tx
          .insert(memoryProfiles)
          .values({ userId, summaries: { ...EMPTY_SUMMARIES, ...summaries }, updatedAt: options.now })
          .onConflictDoUpdate({
            target: memoryProfiles.userId,
            // jsonb `||` replaces only the given keys, inside the database.
            set: { summaries: sql`${memoryProfiles.summaries} || ${JSON.stringify(summaries)}::jsonb`, updatedAt: options.now },
          });
      }

      const removed =
        idsToRemove.length === 0
          ? []
          : await tx
              .delete(memoryFacts)
              .where(and(eq(memoryFacts.userId, userId), inArray(memoryFacts.id, idsToRemove)))
              .returning({ id: memoryFacts.id });

      const added =
        newFacts.length === 0
          ? []
          : await tx
              .insert(memoryFacts)
              // Time-ordered ids break ties newest first: facts learnt within one millisecond keep their order.
              .values(newFacts.map((fact) => ({ id: uuidv7(), userId, ...fact, source: options.source, createdAt: options.now })))
              .onConflictDoNothing({ target: [memoryFacts.userId, memoryFacts.content] })
              .returning({ id: memoryFacts.id });

      const kept = tx
        .select({ id: memoryFacts.id })
        .from(memoryFacts)
        .where(eq(memoryFacts.userId, userId))
        .orderBy(desc(memoryFacts.confidence), desc(memoryFacts.createdAt), desc(memoryFacts.id))
        .limit(options.maxFacts);
      const evicted = await tx
        .delete(memoryFacts)
        .where(and(eq(memoryFacts.userId, userId), notInArray(memoryFacts.id, kept)))
        .returning({ id: memoryFacts.id });

      return { summariesUpdated, factsAdded: added.length, factsRemoved: removed.length, factsEvicted: evicted.length };
    });
  }
}

function nonBlankSummaries(summaries: Partial<MemorySummaries>): Partial<MemorySummaries> {
  const given: Partial<MemorySummaries> = {};
  for (const key of SUMMARY_KEYS) {
    const text = summaries[key]?.trim();
    if (text) given[key] = text;
  }
  return given;
}

/** Trimmed, valid, above the threshold, one per content (the most confident copy). */
function admissibleFacts(facts: ProposedFact[], confidenceThreshold: number): ProposedFact[] {
  const byContent = new Map<string, ProposedFact>();
  for (const fact of facts) {
    const content = fact.content.trim();
    const { confidence } = fact;
    if (content === '' || !(confidence >= confidenceThreshold && confidence <= 1)) continue;
    const previous = byContent.get(content);
    if (previous === undefined || confidence > previous.confidence) byContent.set(content, { ...fact, content });
  }
  return [...byContent.values()];
}
