import type { Skill, SkillRegistry } from './registry.js';

/**
 * Slash words the chat layer owns; `/new task` is never a skill even if a skill is called `new`.
 * Reference §5.2 lists `/new … /goal`; `/start` (Telegram's opening message) and `/connect`
 * (identity binding) are ours.
 */
export const RESERVED_COMMAND_NAMES: ReadonlySet<string> = new Set([
  'new',
  'help',
  'bootstrap',
  'status',
  'models',
  'memory',
  'goal',
  'start',
  'connect',
]);

/**
 * Reference §5.2: the slash word must be followed by whitespace or the end, so `/etc/hosts` and
 * `/a.b` are not skill calls. Case-sensitive like skill names: `/Foo` is plain chat.
 */
const SLASH_SKILL_PATTERN = /^\/([a-z0-9]+(?:-[a-z0-9]+)*)(?:\s+|$)/;

/** A message of the form `/<skill-name> [task]`. */
export interface SlashSkillCall {
  name: string;
  /** The text after the name, trimmed; `''` when there is none. */
  task: string;
}

/**
 * Reads `/<skill-name> task` from the raw message text. `undefined` (plain chat) when the text does
 * not start with `/` (leading whitespace counts), the word is not a valid skill name followed by
 * whitespace or the end, or it is a reserved command. Pure; does not check that the skill exists.
 */
export function parseSlashSkill(text: string): SlashSkillCall | undefined {
  const match = SLASH_SKILL_PATTERN.exec(text);
  const name = match?.[1];
  if (match === null || name === undefined || RESERVED_COMMAND_NAMES.has(name)) return undefined;
  return { name, task: text.slice(match[0].length).trim() };
}

/**
 * What a message means for skills:
 * - `none`: not a slash-skill call; treat as plain chat.
 * - `unknown`: no skill of that name is installed; answer like an unknown command.
 * - `disabled`: installed but switched off; tell the user it must be enabled first.
 * - `active`: run the turn with this skill's instructions; the message goes to the agent unchanged.
 */
export type SlashSkillResolution =
  | { kind: 'none' }
  | { kind: 'unknown'; name: string }
  | { kind: 'disabled'; name: string }
  | { kind: 'active'; skill: Skill; task: string };

/**
 * Resolves a message against the installed skills (see {@link parseSlashSkill} for the grammar).
 *
 * @throws whatever `registry.get` throws when enabled states cannot be read (reference §5.2:
 *   answer "Failed to resolve slash skill command. Please check the skill configuration.").
 */
export async function resolveSlashSkill(
  text: string,
  registry: Pick<SkillRegistry, 'get'>,
): Promise<SlashSkillResolution> {
  const call = parseSlashSkill(text);
  if (call === undefined) return { kind: 'none' };
  const skill = await registry.get(call.name);
  if (skill === undefined) return { kind: 'unknown', name: call.name };
  if (!skill.isEnabled) return { kind: 'disabled', name: call.name };
  return { kind: 'active', skill, task: call.task };
}
