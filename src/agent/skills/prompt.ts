import type { Skill } from './registry.js';

/**
 * The `<available_skills>` system-prompt block: one line per enabled skill with its name, SKILL.md
 * path and description, and the rule to read that file with `read_file` first. Disabled skills in
 * `skills` are left out; `''` when none is left, so a server without skills pays no tokens.
 */
export function formatAvailableSkills(skills: readonly Skill[]): string {
  const enabled = skills.filter((skill) => skill.isEnabled);
  if (enabled.length === 0) return '';
  return [
    '<available_skills>',
    "Skills are tested instructions for specific tasks. When a task matches a skill's description, first read its SKILL.md with `read_file` at the path shown, then follow it.",
    ...enabled.map((skill) => `- ${skill.name} (${skill.path}): ${oneLine(skill.description)}`),
    '</available_skills>',
  ].join('\n');
}

/**
 * The `<active_skill>` system-prompt block for a turn the user started with `/<name> task`: the
 * skill's instructions inline, so the model needs no `read_file` first. Relative paths in the
 * instructions refer to the skill's folder, which the block names. `instructions` is included as
 * written (it is the operator's own Markdown, not user input).
 */
export function formatActiveSkill(skill: Skill, instructions: string): string {
  const folder = skill.path.slice(0, skill.path.lastIndexOf('/'));
  return [
    `<active_skill name="${skill.name}" path="${skill.path}">`,
    `The user asked for the \`${skill.name}\` skill with /${skill.name} for this message: follow these instructions for it. Files they mention relative to the skill live under ${folder}/.`,
    '',
    instructions.trim(),
    '</active_skill>',
  ].join('\n');
}

/**
 * Descriptions may be YAML block scalars; one line each keeps the list readable. Angle brackets are
 * escaped so a description cannot close the block it sits in.
 */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
