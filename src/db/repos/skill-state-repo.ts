import { sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { skillStates } from '../schema/index.js';

/** The operator's enable/disable choices, by skill name. A skill without a row has made no choice. */
export class SkillStateRepo {
  constructor(private readonly db: Database) {}

  /** Every recorded choice: skill name → enabled. Names of skills no longer installed are included. */
  async all(): Promise<Map<string, boolean>> {
    const rows = await this.db.select({ name: skillStates.name, enabled: skillStates.enabled }).from(skillStates);
    return new Map(rows.map((row) => [row.name, row.enabled]));
  }

  /** Records the choice for `name`, replacing any earlier one; one statement, so concurrent writers cannot collide. */
  async upsert(name: string, isEnabled: boolean): Promise<void> {
    await this.db
      .insert(skillStates)
      .values({ name, enabled: isEnabled })
      .onConflictDoUpdate({ target: skillStates.name, set: { enabled: isEnabled, updatedAt: sql`now()` } });
  }
}
