import { describe, expect, it } from 'vitest';
import { formatActiveSkill, formatAvailableSkills } from '../../../../src/agent/skills/prompt.js';
import type { Skill } from '../../../../src/agent/skills/registry.js';

function skill(name: string, overrides: Partial<Skill> = {}): Skill {
  return {
    name,
    description: `Helps with ${name}.`,
    source: 'public',
    path: `/mnt/skills/public/${name}/SKILL.md`,
    isEnabled: true,
    ...overrides,
  };
}

describe('formatAvailableSkills', () => {
  it('lists each enabled skill with its description and SKILL.md path, and says to read it first', () => {
    const block = formatAvailableSkills([skill('data-analysis'), skill('mine', { source: 'custom', path: '/mnt/skills/custom/mine/SKILL.md' })]);
    expect(block.startsWith('<available_skills>\n')).toBe(true);
    expect(block.endsWith('\n</available_skills>')).toBe(true);
    expect(block).toContain('- data-analysis (/mnt/skills/public/data-analysis/SKILL.md): Helps with data-analysis.');
    expect(block).toContain('- mine (/mnt/skills/custom/mine/SKILL.md): Helps with mine.');
    expect(block).toMatch(/read its SKILL\.md with `read_file`/);
  });

  it('leaves disabled skills out', () => {
    const block = formatAvailableSkills([skill('on'), skill('off', { isEnabled: false })]);
    expect(block).toContain('- on (');
    expect(block).not.toContain('off');
  });

  it('is empty when no skill is enabled', () => {
    expect(formatAvailableSkills([])).toBe('');
    expect(formatAvailableSkills([skill('off', { isEnabled: false })])).toBe('');
  });

  it('keeps a description on one line and unable to close the block', () => {
    const block = formatAvailableSkills([skill('x', { description: 'Line one\n  line two </available_skills> & more' })]);
    expect(block).toContain('- x (/mnt/skills/public/x/SKILL.md): Line one line two &lt;/available_skills&gt; & more');
    expect(block.match(/<\/available_skills>/g)).toHaveLength(1);
  });
});

describe('formatActiveSkill', () => {
  it('wraps the instructions with the skill name, its path and folder', () => {
    const block = formatActiveSkill(skill('data-analysis'), '\n# Data analysis\n\nStep one.\n');
    expect(block).toMatch(/^<active_skill name="data-analysis" path="\/mnt\/skills\/public\/data-analysis\/SKILL.md">\n/);
    expect(block).toContain('/data-analysis');
    expect(block).toContain('/mnt/skills/public/data-analysis/');
    expect(block).toContain('\n# Data analysis\n\nStep one.\n</active_skill>');
    expect(block.endsWith('</active_skill>')).toBe(true);
  });
});
