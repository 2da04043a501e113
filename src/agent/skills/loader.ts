import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../logger.js';
import { isFsError, VIRTUAL_SKILLS } from '../sandbox/paths.js';
import { parseSkillFile, SKILL_FILE_NAME, SkillFileError, type SkillMetadata } from './skill-file.js';

/** `public` skills ship with the server; `custom` ones are the operator's and win on a name clash. */
export type SkillSource = 'public' | 'custom';

/** Scanned in this order, so a later source replaces an earlier one's skill of the same name. */
const SOURCES: readonly SkillSource[] = ['public', 'custom'];

/** A skill as found on disk, before any enabled state is applied. */
export interface SkillDefinition extends SkillMetadata {
  source: SkillSource;
  /** Where the agent reads the file: `/mnt/skills/<source>/<name>/SKILL.md`. */
  path: string;
  /** The SKILL.md Markdown after the front matter, as it was when loaded. */
  instructions: string;
}

/**
 * Scans `<skillsDir>/public/<name>/SKILL.md` and `<skillsDir>/custom/<name>/SKILL.md`. Missing
 * folders mean no skills. A skill that cannot be used (broken front matter, or a `name` other than
 * its folder's) is skipped with one warning naming the file relative to `skillsDir`; a custom
 * skill with a public skill's name replaces it, with one warning. Folders without a SKILL.md and
 * hidden folders are ignored. Sorted by name.
 *
 * @throws only when a source folder exists but cannot be listed (permissions, not a directory).
 */
export async function loadSkills(skillsDir: string, logger: Logger): Promise<SkillDefinition[]> {
  const byName = new Map<string, SkillDefinition>();
  for (const source of SOURCES) {
    for (const skill of await loadSource(skillsDir, source, logger)) {
      const shadowed = byName.get(skill.name);
      if (shadowed !== undefined) {
        logger.warn(
          { skill: skill.name, file: relativeFile(source, skill.name), shadowed: relativeFile(shadowed.source, skill.name) },
          'custom skill replaces the public skill of the same name',
        );
      }
      byName.set(skill.name, skill);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

async function loadSource(skillsDir: string, source: SkillSource, logger: Logger): Promise<SkillDefinition[]> {
  let folders: string[];
  try {
    folders = await readdir(join(skillsDir, source));
  } catch (error) {
    if (isFsError(error, 'ENOENT')) return [];
    throw error;
  }
  const skills: SkillDefinition[] = [];
  for (const folder of folders.sort()) {
    if (folder.startsWith('.')) continue;
    const skill = await loadSkillFolder(skillsDir, source, folder, logger);
    if (skill !== undefined) skills.push(skill);
  }
  return skills;
}

async function loadSkillFolder(
  skillsDir: string,
  source: SkillSource,
  folder: string,
  logger: Logger,
): Promise<SkillDefinition | undefined> {
  const relPath = relativeFile(source, folder);
  const hostFile = join(skillsDir, source, folder, SKILL_FILE_NAME);
  try {
    // stat follows symlinks, so a linked skill folder works like a copied one.
    if (!(await stat(join(skillsDir, source, folder))).isDirectory()) return undefined;
    const { metadata, body } = parseSkillFile(await readFile(hostFile, 'utf8'), relPath);
    // The folder name is the skill's address (its path, its /slash command); two names for one skill would drift apart.
    if (metadata.name !== folder) {
      throw new SkillFileError(relPath, `name '${metadata.name}' does not match its folder '${folder}'`);
    }
    return { ...metadata, source, path: `${VIRTUAL_SKILLS}/${source}/${folder}/${SKILL_FILE_NAME}`, instructions: body };
  } catch (error) {
    if (isFsError(error, 'ENOENT') || isFsError(error, 'ENOTDIR')) return undefined;
    const reason = error instanceof SkillFileError ? error.reason : `cannot be read (${fsErrorCode(error)})`;
    logger.warn({ file: relPath, reason }, 'skipped a skill whose SKILL.md is invalid');
    return undefined;
  }
}

function relativeFile(source: SkillSource, folder: string): string {
  return `${source}/${folder}/${SKILL_FILE_NAME}`;
}

/** The errno code only: a Node file-system message would put the host path in the log. */
function fsErrorCode(error: unknown): string {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return code ?? 'unknown error';
}
