import type { Database } from '../../db/index.js';
import { SkillStateRepo } from '../../db/repos/skill-state-repo.js';
import { NotFoundError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { loadSkills, type SkillDefinition, type SkillSource } from './loader.js';
import { SKILL_NAME_PATTERN } from './skill-file.js';

/** An installed skill as the rest of the server sees it. */
export interface Skill {
  name: string;
  description: string;
  license?: string | undefined;
  /** Tools the skill expects to use; `undefined` when its SKILL.md does not say. */
  allowedTools?: string[] | undefined;
  source: SkillSource;
  /** Where the agent reads it: `/mnt/skills/<source>/<name>/SKILL.md`. */
  path: string;
  /** False only when an operator disabled it; skills are enabled by default. */
  isEnabled: boolean;
}

export interface SkillRegistryOptions {
  /** Host folder holding `public/` and `custom/`; it need not exist. */
  skillsDir: string;
  /** Where enabled states live; shared by every server process. */
  db: Database;
  logger: Logger;
  /**
   * How long enabled states read from the database are reused, so building a prompt does not
   * query on every model call. A change made by another process shows up after at most this long.
   * Default 1000.
   */
  stateTtlMs?: number;
  /** Milliseconds clock for the state cache. Default `Date.now`. */
  now?: () => number;
}

const DEFAULT_STATE_TTL_MS = 1000;

/**
 * The installed skills (read from disk once, and again on `reload()`) joined with their enabled
 * state from the database. Methods that read state throw the driver's error when the database
 * cannot be reached; nothing stale is served after the TTL.
 */
export class SkillRegistry {
  private definitions: Map<string, SkillDefinition>;
  private readonly repo: SkillStateRepo;
  private readonly stateTtlMs: number;
  private readonly now: () => number;
  private cachedStates: { states: Map<string, boolean>; expiresAtMs: number } | undefined;
  private pendingStates: Promise<Map<string, boolean>> | undefined;
  /** Bumped by every write, so a read that started before it cannot cache what it saw. */
  private stateGeneration = 0;

  private constructor(
    definitions: SkillDefinition[],
    private readonly options: SkillRegistryOptions,
  ) {
    this.definitions = byName(definitions);
    this.repo = new SkillStateRepo(options.db);
    this.stateTtlMs = options.stateTtlMs ?? DEFAULT_STATE_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Scans the skills folder (see `loadSkills`: broken skills are skipped with a warning) and
   * returns a registry over what it found. Reads no state yet.
   *
   * @throws when a source folder exists but cannot be listed.
   */
  static async load(options: SkillRegistryOptions): Promise<SkillRegistry> {
    const definitions = await loadSkills(options.skillsDir, options.logger);
    options.logger.info({ skills: definitions.map((skill) => skill.name) }, 'skills loaded');
    return new SkillRegistry(definitions, options);
  }

  /** Scans the skills folder again, picking up added, removed and edited skills. Enabled states are kept. */
  async reload(): Promise<void> {
    const definitions = await loadSkills(this.options.skillsDir, this.options.logger);
    this.definitions = byName(definitions);
    this.options.logger.info({ skills: definitions.map((skill) => skill.name) }, 'skills reloaded');
  }

  /** Every installed skill, enabled or not, sorted by name. */
  async list(): Promise<Skill[]> {
    const states = await this.states();
    return [...this.definitions.values()].map((definition) => toSkill(definition, states));
  }

  /** The skills the agent may use, sorted by name. */
  async listEnabled(): Promise<Skill[]> {
    return (await this.list()).filter((skill) => skill.isEnabled);
  }

  /** The installed skill called `name`, or `undefined`. */
  async get(name: string): Promise<Skill | undefined> {
    const definition = this.definitions.get(name);
    return definition === undefined ? undefined : toSkill(definition, await this.states());
  }

  /**
   * Records the operator's choice in the database; every process sees it within its state TTL,
   * this one at once.
   *
   * @throws NotFoundError when no skill called `name` is installed (nothing is written).
   */
  async setEnabled(name: string, isEnabled: boolean): Promise<Skill> {
    const definition = this.definitions.get(name);
    if (definition === undefined) throw skillNotFound(name);
    await this.repo.upsert(name, isEnabled);
    this.stateGeneration += 1;
    this.cachedStates = undefined;
    this.pendingStates = undefined;
    return { ...toSkill(definition, new Map()), isEnabled };
  }

  /**
   * The SKILL.md Markdown after its front matter, as loaded (edits show after `reload()`).
   * Returned whether or not the skill is enabled; callers decide whether to use it.
   *
   * @throws NotFoundError when no skill called `name` is installed.
   */
  async instructions(name: string): Promise<string> {
    const definition = this.definitions.get(name);
    if (definition === undefined) throw skillNotFound(name);
    return definition.instructions;
  }

  /** Enabled states, from the cache while fresh; concurrent callers share one query. */
  private states(): Promise<Map<string, boolean>> {
    const cached = this.cachedStates;
    if (cached !== undefined && this.now() < cached.expiresAtMs) return Promise.resolve(cached.states);
    this.pendingStates ??= this.fetchStates();
    return this.pendingStates;
  }

  private async fetchStates(): Promise<Map<string, boolean>> {
    const generation = this.stateGeneration;
    try {
      const states = await this.repo.all();
      if (generation === this.stateGeneration) {
        this.cachedStates = { states, expiresAtMs: this.now() + this.stateTtlMs };
      }
      return states;
    } finally {
      if (generation === this.stateGeneration) this.pendingStates = undefined;
    }
  }
}

function byName(definitions: SkillDefinition[]): Map<string, SkillDefinition> {
  return new Map(definitions.map((definition) => [definition.name, definition]));
}

function toSkill(definition: SkillDefinition, states: ReadonlyMap<string, boolean>): Skill {
  const { name, description, license, allowedTools, source, path } = definition;
  return { name, description, license, allowedTools, source, path, isEnabled: states.get(name) ?? true };
}

/** Names only when they look like skill names, so arbitrary input never lands in a message. */
function skillNotFound(name: string): NotFoundError {
  return new NotFoundError(SKILL_NAME_PATTERN.test(name) && name.length <= 64 ? `Skill '${name}'` : 'Skill');
}
