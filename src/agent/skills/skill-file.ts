import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { AppError } from '../../errors.js';

/** What a skill name must look like: lower-case words of letters and digits joined by single hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** The file that makes a folder a skill. */
export const SKILL_FILE_NAME = 'SKILL.md';

/** Limits of the Agent Skills format (agentskills.io/specification); a longer description only bloats every prompt. */
const MAX_NAME_CHARS = 64;
const MAX_DESCRIPTION_CHARS = 1024;

/** The front matter of a SKILL.md, validated. */
export interface SkillMetadata {
  name: string;
  /** What the skill does and when to use it; shown to the model in every prompt. */
  description: string;
  license?: string | undefined;
  /** Tools the skill expects to use; `undefined` when the file does not say, `[]` for none. */
  allowedTools?: string[] | undefined;
}

/** A SKILL.md split into validated front matter and its instructions. */
export interface ParsedSkillFile {
  metadata: SkillMetadata;
  /** The Markdown after the front matter, without leading blank lines or trailing whitespace. */
  body: string;
}

/**
 * A SKILL.md that cannot be used. `message` names the file by its path relative to the skills
 * folder (never a host path) and says what is wrong, so it can be logged as-is.
 */
export class SkillFileError extends AppError {
  /** The file, relative to the skills folder, e.g. `custom/my-skill/SKILL.md`. */
  readonly relPath: string;
  /** What is wrong, without the path. */
  readonly reason: string;

  constructor(relPath: string, reason: string, options: { cause?: unknown } = {}) {
    super('CONFIG_INVALID', `${relPath}: ${reason}`, options);
    this.name = 'SkillFileError';
    this.relPath = relPath;
    this.reason = reason;
  }
}

/** Optional fields written but left empty (`license:`) are YAML null; treat them as absent. */
const optionalString = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .nullish()
  .transform((value) => value ?? undefined);

const allowedToolsField = z
  .union([z.array(z.string().trim().min(1, 'must not be empty')), z.string()], {
    error: 'must be a list of tool names or a comma/space separated string',
  })
  .nullish()
  .transform((value) => {
    if (value === null || value === undefined) return undefined;
    return typeof value === 'string' ? value.split(/[\s,]+/).filter((tool) => tool !== '') : value;
  });

const requiredString = (what: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? 'is required' : `must be a string (${what})`) });

/** Unknown keys (`metadata`, `version`, …) are allowed: other tools write them and we have no use for them. */
const frontMatterSchema = z.looseObject({
  name: requiredString('the skill name')
    .max(MAX_NAME_CHARS, `must be at most ${MAX_NAME_CHARS} characters`)
    .regex(SKILL_NAME_PATTERN, 'must be lower-case letters and digits joined by single hyphens, e.g. data-analysis'),
  description: requiredString('what the skill does')
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_DESCRIPTION_CHARS, `must be at most ${MAX_DESCRIPTION_CHARS} characters`),
  license: optionalString,
  'allowed-tools': allowedToolsField,
});

/**
 * Parses a SKILL.md: YAML front matter between a first line `---` and the next line `---`,
 * then Markdown instructions. Pure; `relPath` is only used to name the file in errors.
 *
 * @throws SkillFileError when the front matter is missing, unterminated, not valid YAML, not a
 *   mapping, or fails validation (missing/empty `name` or `description`, a `name` not matching
 *   {@link SKILL_NAME_PATTERN}, a malformed `allowed-tools`).
 */
export function parseSkillFile(text: string, relPath: string): ParsedSkillFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') throw new SkillFileError(relPath, 'no YAML front matter (the first line must be ---)');
  const closing = lines.findIndex((line, index) => index > 0 && line.trimEnd() === '---');
  if (closing === -1) throw new SkillFileError(relPath, 'front matter is not closed by a --- line');

  let raw: unknown;
  try {
    raw = parseYaml(lines.slice(1, closing).join('\n'));
  } catch (error) {
    throw new SkillFileError(relPath, describeYamlError(error), { cause: error });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SkillFileError(relPath, 'front matter must be a YAML mapping of keys to values');
  }

  const result = frontMatterSchema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || 'front matter'} ${issue.message}`);
    throw new SkillFileError(relPath, issues.join('; '));
  }
  const { name, description, license, 'allowed-tools': allowedTools } = result.data;
  const body = lines
    .slice(closing + 1)
    .join('\n')
    .replace(/^(?:[ \t]*\n)+/, '')
    .trimEnd();
  return { metadata: { name, description, license, allowedTools }, body };
}

/** The YAML library's first message line, with its line number moved from the front matter to the file. */
function describeYamlError(error: unknown): string {
  if (!(error instanceof YAMLParseError)) return 'front matter is not valid YAML';
  const firstLine = (error.message.split('\n', 1)[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  // +1: the opening --- is line 1 of the file but not part of the YAML.
  const line = error.linePos?.[0]?.line;
  return `invalid YAML${line === undefined ? '' : ` at line ${line + 1}`}: ${firstLine}`;
}
