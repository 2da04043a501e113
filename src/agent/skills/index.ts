/**
 * Skills: task instructions in `<skills dir>/{public,custom}/<name>/SKILL.md`, listed in the system
 * prompt, switched on and off by the operator, and activated for one turn with `/<name> task`.
 */
export { loadSkills, type SkillDefinition, type SkillSource } from './loader.js';
export { formatActiveSkill, formatAvailableSkills } from './prompt.js';
export { type Skill, SkillRegistry, type SkillRegistryOptions } from './registry.js';
export {
  type ParsedSkillFile,
  parseSkillFile,
  SKILL_NAME_PATTERN,
  SkillFileError,
  type SkillMetadata,
} from './skill-file.js';
export {
  parseSlashSkill,
  RESERVED_COMMAND_NAMES,
  resolveSlashSkill,
  type SlashSkillCall,
  type SlashSkillResolution,
} from './slash.js';
