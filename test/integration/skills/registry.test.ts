import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSkills, resolveSlashSkill, SkillRegistry } from '../../../src/agent/skills/index.js';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { NotFoundError } from '../../../src/errors.js';
import { createLogger, type Logger } from '../../../src/logger.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

const SHIPPED_SKILLS_DIR = fileURLToPath(new URL('../../../skills', import.meta.url));

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}
const WARN = 40;

function captureLogs(): { logger: Logger; lines: LogLine[]; warnings: () => LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  return { logger, lines, warnings: () => lines.filter((line) => line.level === WARN) };
}

function makeSkillsDir(): string {
  return mkdtempSync(join(tmpdir(), 'dfc-skills-'));
}

function writeSkill(root: string, source: 'public' | 'custom', folder: string, text?: string): void {
  mkdirSync(join(root, source, folder), { recursive: true });
  const content = text ?? `---\nname: ${folder}\ndescription: The ${source} ${folder} skill.\n---\n# ${folder}\n\nSteps for ${source}.\n`;
  writeFileSync(join(root, source, folder, 'SKILL.md'), content);
}

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
function skillsDir(): string {
  const dir = makeSkillsDir();
  tempDirs.push(dir);
  return dir;
}

describe('loadSkills', () => {
  it('reads public and custom skills, sorted by name, with the paths the agent sees', async () => {
    const root = skillsDir();
    writeSkill(root, 'public', 'zeta');
    writeSkill(root, 'public', 'alpha');
    writeSkill(root, 'custom', 'mine');
    const { logger, warnings } = captureLogs();
    const skills = await loadSkills(root, logger);
    expect(skills.map((s) => [s.name, s.source, s.path])).toEqual([
      ['alpha', 'public', '/mnt/skills/public/alpha/SKILL.md'],
      ['mine', 'custom', '/mnt/skills/custom/mine/SKILL.md'],
      ['zeta', 'public', '/mnt/skills/public/zeta/SKILL.md'],
    ]);
    expect(skills[0]?.instructions).toBe('# alpha\n\nSteps for public.');
    expect(warnings()).toEqual([]);
  });

  it('finds no skills, without complaint, when the folders do not exist', async () => {
    const { logger, warnings } = captureLogs();
    expect(await loadSkills(join(skillsDir(), 'nowhere'), logger)).toEqual([]);
    expect(warnings()).toEqual([]);
  });

  it('skips each broken skill with one warning naming its file, and loads the rest', async () => {
    const root = skillsDir();
    writeSkill(root, 'public', 'good');
    writeSkill(root, 'public', 'bad-yaml', '---\nname: bad-yaml\ndescription: [oops\n---\nbody');
    writeSkill(root, 'custom', 'no-description', '---\nname: no-description\n---\nbody');
    writeSkill(root, 'custom', 'renamed', '---\nname: other-name\ndescription: x\n---\nbody');
    mkdirSync(join(root, 'public', 'just-a-folder'));
    writeFileSync(join(root, 'public', 'README.md'), 'not a skill');
    const { logger, warnings } = captureLogs();

    const skills = await loadSkills(root, logger);

    expect(skills.map((s) => s.name)).toEqual(['good']);
    expect(warnings().map((w) => [w.file, w.reason])).toEqual([
      ['public/bad-yaml/SKILL.md', expect.stringMatching(/^invalid YAML at line 3/)],
      ['custom/no-description/SKILL.md', 'description is required'],
      ['custom/renamed/SKILL.md', "name 'other-name' does not match its folder 'renamed'"],
    ]);
    for (const warning of warnings()) expect(JSON.stringify(warning)).not.toContain(root);
  });

  it('lets a custom skill replace the public one of the same name, warning once', async () => {
    const root = skillsDir();
    writeSkill(root, 'public', 'report');
    writeSkill(root, 'custom', 'report');
    writeSkill(root, 'public', 'other');
    const { logger, warnings } = captureLogs();

    const skills = await loadSkills(root, logger);

    expect(skills.map((s) => [s.name, s.source])).toEqual([
      ['other', 'public'],
      ['report', 'custom'],
    ]);
    expect(skills[1]?.instructions).toContain('Steps for custom.');
    expect(warnings()).toEqual([
      expect.objectContaining({ skill: 'report', file: 'custom/report/SKILL.md', shadowed: 'public/report/SKILL.md' }),
    ]);
  });

  it('follows a symlinked skill folder', async () => {
    const root = skillsDir();
    const elsewhere = skillsDir();
    writeSkill(elsewhere, 'public', 'linked');
    mkdirSync(join(root, 'custom'), { recursive: true });
    symlinkSync(join(elsewhere, 'public', 'linked'), join(root, 'custom', 'linked'));
    const { logger } = captureLogs();
    expect((await loadSkills(root, logger)).map((s) => s.path)).toEqual(['/mnt/skills/custom/linked/SKILL.md']);
  });
});

describe('the shipped data-analysis skill', () => {
  it('loads without warnings and says what it is for', async () => {
    const { logger, warnings } = captureLogs();
    const skills = await loadSkills(SHIPPED_SKILLS_DIR, logger);
    const skill = skills.find((s) => s.name === 'data-analysis');
    expect(warnings()).toEqual([]);
    expect(skill).toMatchObject({
      source: 'public',
      path: '/mnt/skills/public/data-analysis/SKILL.md',
      license: 'MIT',
      allowedTools: ['bash', 'ls', 'read_file', 'write_file', 'present_files'],
    });
    expect(skill?.description).toMatch(/CSV/);
    expect(skill?.instructions).toContain('/mnt/user-data/outputs/');
    expect(skill?.instructions).toContain('present_files');
  });

  const hasPython = (() => {
    try {
      execFileSync('python3', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!hasPython)('ships a helper that profiles and groups a quoted CSV', async () => {
    const dir = skillsDir();
    const csvPath = join(dir, 'sales.csv');
    writeFileSync(csvPath, 'region,product,amount\nNorth,"Widget, large","1,200.50"\nSouth,Gadget,300\nNorth,Gadget,n/a\nSouth,Widget,45.5\n');
    const script = join(SHIPPED_SKILLS_DIR, 'public', 'data-analysis', 'scripts', 'tabular.py');
    const run = promisify(execFile);

    const profile = await run('python3', [script, 'profile', csvPath]);
    expect(profile.stdout).toContain('Rows: 4');
    expect(profile.stdout).toMatch(/\| amount \| numeric \| 3 \| 1 \| 3 \| 45\.5 \| 1200\.5 \|/);

    const tablePath = join(dir, 'by-region.csv');
    await run('python3', [script, 'group', csvPath, '--by', 'region', '--sum', 'amount', '--csv', tablePath]);
    expect(readFileSync(tablePath, 'utf8').trim().split(/\r?\n/)).toEqual([
      'region,count,sum_amount',
      'North,2,1200.5',
      'South,2,345.5',
    ]);
  });
});

describe.each(testDatabaseKinds())('SkillRegistry on %s', (kind) => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database.close());
  beforeEach(async () => {
    await database.db.delete(schema.skillStates);
  });

  async function registryOver(root: string, options: { now?: () => number } = {}): Promise<SkillRegistry> {
    return SkillRegistry.load({ skillsDir: root, db: database.db, logger: captureLogs().logger, ...options });
  }

  function twoSkills(): string {
    const root = skillsDir();
    writeSkill(root, 'public', 'alpha');
    writeSkill(root, 'custom', 'beta');
    return root;
  }

  it('lists every skill as enabled until an operator says otherwise', async () => {
    const registry = await registryOver(twoSkills());
    expect(await registry.list()).toEqual([
      {
        name: 'alpha',
        description: 'The public alpha skill.',
        license: undefined,
        allowedTools: undefined,
        source: 'public',
        path: '/mnt/skills/public/alpha/SKILL.md',
        isEnabled: true,
      },
      expect.objectContaining({ name: 'beta', source: 'custom', isEnabled: true }),
    ]);
    expect((await registry.listEnabled()).map((s) => s.name)).toEqual(['alpha', 'beta']);
  });

  it('keeps a disabled skill disabled for a new registry on the same database, and re-enables it', async () => {
    const root = twoSkills();
    const registry = await registryOver(root);

    expect(await registry.setEnabled('alpha', false)).toMatchObject({ name: 'alpha', isEnabled: false });
    expect((await registry.listEnabled()).map((s) => s.name)).toEqual(['beta']);
    expect(await registry.get('alpha')).toMatchObject({ isEnabled: false });

    const restarted = await registryOver(root);
    expect((await restarted.list()).map((s) => [s.name, s.isEnabled])).toEqual([
      ['alpha', false],
      ['beta', true],
    ]);

    await restarted.setEnabled('alpha', true);
    expect((await restarted.listEnabled()).map((s) => s.name)).toEqual(['alpha', 'beta']);
  });

  it("sees another process's change once its state TTL has passed", async () => {
    const root = twoSkills();
    let nowMs = 1_000_000;
    const reader = await registryOver(root, { now: () => nowMs });
    const writer = await registryOver(root);
    expect((await reader.get('beta'))?.isEnabled).toBe(true);

    await writer.setEnabled('beta', false);
    nowMs += 1001;

    expect((await reader.get('beta'))?.isEnabled).toBe(false);
    expect((await reader.listEnabled()).map((s) => s.name)).toEqual(['alpha']);
  });

  it('refuses unknown skills with NotFoundError and records nothing', async () => {
    const registry = await registryOver(twoSkills());
    await expect(registry.setEnabled('gamma', false)).rejects.toBeInstanceOf(NotFoundError);
    await expect(registry.setEnabled('gamma', false)).rejects.toMatchObject({ status: 404, userMessage: "Skill 'gamma' not found" });
    await expect(registry.instructions('gamma')).rejects.toBeInstanceOf(NotFoundError);
    expect(await registry.get('gamma')).toBeUndefined();
    expect(await database.db.select().from(schema.skillStates)).toEqual([]);
  });

  it('returns the instructions without front matter', async () => {
    const registry = await registryOver(twoSkills());
    expect(await registry.instructions('beta')).toBe('# beta\n\nSteps for custom.');
  });

  it('serves the custom skill when it shadows a public one', async () => {
    const root = skillsDir();
    writeSkill(root, 'public', 'report');
    writeSkill(root, 'custom', 'report');
    const registry = await registryOver(root);
    expect(await registry.get('report')).toMatchObject({ source: 'custom', path: '/mnt/skills/custom/report/SKILL.md' });
    expect(await registry.instructions('report')).toContain('Steps for custom.');
  });

  it('picks up added and removed skills on reload', async () => {
    const root = twoSkills();
    const registry = await registryOver(root);
    writeSkill(root, 'custom', 'gamma');
    rmSync(join(root, 'public', 'alpha'), { recursive: true });

    await registry.reload();

    expect((await registry.list()).map((s) => s.name)).toEqual(['beta', 'gamma']);
  });

  it('resolves /slash calls to none, unknown, disabled or active', async () => {
    const registry = await registryOver(twoSkills());
    await registry.setEnabled('beta', false);

    expect(await resolveSlashSkill('please sum it', registry)).toEqual({ kind: 'none' });
    expect(await resolveSlashSkill('/help', registry)).toEqual({ kind: 'none' });
    expect(await resolveSlashSkill('/gamma sum it', registry)).toEqual({ kind: 'unknown', name: 'gamma' });
    expect(await resolveSlashSkill('/beta sum it', registry)).toEqual({ kind: 'disabled', name: 'beta' });
    expect(await resolveSlashSkill('/alpha sum it', registry)).toEqual({
      kind: 'active',
      skill: expect.objectContaining({ name: 'alpha', isEnabled: true }),
      task: 'sum it',
    });
  });
});
