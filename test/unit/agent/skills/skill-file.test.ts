import { describe, expect, it } from 'vitest';
import { parseSkillFile, SkillFileError } from '../../../../src/agent/skills/skill-file.js';

const REL_PATH = 'custom/demo/SKILL.md';

function skillFile(frontMatter: string, body = '# Demo\n\nDo the thing.\n'): string {
  return `---\n${frontMatter}\n---\n${body}`;
}

/** The reason a file is rejected, or a failure when it is accepted. */
function rejection(text: string): SkillFileError {
  try {
    parseSkillFile(text, REL_PATH);
  } catch (error) {
    expect(error).toBeInstanceOf(SkillFileError);
    return error as SkillFileError;
  }
  throw new Error('expected the skill file to be rejected');
}

describe('parseSkillFile', () => {
  it('reads name, description, license and allowed-tools, and returns the body without front matter', () => {
    const parsed = parseSkillFile(
      skillFile('name: demo\ndescription: Does the thing.\nlicense: MIT\nallowed-tools: [bash, read_file]', '\n\n# Demo\n\nStep one.\n\n'),
      REL_PATH,
    );
    expect(parsed).toEqual({
      metadata: { name: 'demo', description: 'Does the thing.', license: 'MIT', allowedTools: ['bash', 'read_file'] },
      body: '# Demo\n\nStep one.',
    });
  });

  it('leaves optional fields undefined when absent or empty', () => {
    const { metadata } = parseSkillFile(skillFile('name: demo\ndescription: x\nlicense:\nallowed-tools:'), REL_PATH);
    expect(metadata.license).toBeUndefined();
    expect(metadata.allowedTools).toBeUndefined();
  });

  it.each([
    ['a comma separated string', 'bash, read_file,write_file', ['bash', 'read_file', 'write_file']],
    ['a space separated string', 'bash read_file  ls', ['bash', 'read_file', 'ls']],
    ['a block list', '\n  - bash\n  - ls', ['bash', 'ls']],
    ['an empty list (no tools)', '[]', []],
  ])('accepts allowed-tools as %s', (_, value, expected) => {
    const { metadata } = parseSkillFile(skillFile(`name: demo\ndescription: x\nallowed-tools: ${value}`), REL_PATH);
    expect(metadata.allowedTools).toEqual(expected);
  });

  it('keeps unknown keys out of the way and reads a multi-line description', () => {
    const { metadata } = parseSkillFile(
      skillFile('name: demo\nversion: 2\nmetadata:\n  author: me\ndescription: >\n  First line\n  second line.'),
      REL_PATH,
    );
    expect(metadata).toMatchObject({ name: 'demo', description: 'First line second line.' });
  });

  it('accepts CRLF line endings and a byte order mark', () => {
    const parsed = parseSkillFile('\uFEFF---\r\nname: demo\r\ndescription: x\r\n---\r\nBody\r\n', REL_PATH);
    expect(parsed.metadata.name).toBe('demo');
    expect(parsed.body).toBe('Body');
  });

  it('does not end the front matter at a --- inside the body', () => {
    const parsed = parseSkillFile(skillFile('name: demo\ndescription: x', 'Intro\n\n---\n\nMore'), REL_PATH);
    expect(parsed.body).toBe('Intro\n\n---\n\nMore');
  });

  it.each([
    ['no front matter', '# Just markdown\n', /no YAML front matter/],
    ['front matter after leading text', 'hello\n---\nname: demo\n---\n', /no YAML front matter/],
    ['an unclosed front matter', '---\nname: demo\ndescription: x\n', /not closed/],
    ['broken YAML', skillFile('name: demo\ndescription: [oops'), /invalid YAML at line 3/],
    ['a duplicate key', skillFile('name: demo\nname: other\ndescription: x'), /invalid YAML.*unique/],
    ['a YAML list instead of a mapping', skillFile('- name\n- description'), /must be a YAML mapping/],
    ['empty front matter', '---\n---\nbody', /must be a YAML mapping/],
    ['a missing name', skillFile('description: x'), /^name is required$/],
    ['a missing description', skillFile('name: demo'), /^description is required$/],
    ['an empty description', skillFile('name: demo\ndescription: "  "'), /description must not be empty/],
    ['a numeric name', skillFile('name: 42\ndescription: x'), /name must be a string/],
    ['an upper-case name', skillFile('name: Demo\ndescription: x'), /name must be lower-case/],
    ['a name with a double hyphen', skillFile('name: my--skill\ndescription: x'), /name must be lower-case/],
    ['a name ending in a hyphen', skillFile('name: skill-\ndescription: x'), /name must be lower-case/],
    ['a name with a space', skillFile('name: my skill\ndescription: x'), /name must be lower-case/],
    ['a name over 64 characters', skillFile(`name: ${'a'.repeat(65)}\ndescription: x`), /name must be at most 64/],
    ['allowed-tools as a number', skillFile('name: demo\ndescription: x\nallowed-tools: 3'), /allowed-tools must be a list/],
  ])('rejects %s', (_, text, reason) => {
    const error = rejection(text);
    expect(error.reason).toMatch(reason);
    expect(error.relPath).toBe(REL_PATH);
    expect(error.message).toContain(REL_PATH);
  });
});
