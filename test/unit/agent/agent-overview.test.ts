import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { firstLineOf, listAgentOverviews } from '../../../src/agent/agent-overview.js';

describe('firstLineOf', () => {
  it.each([
    ['skips headings and takes the first sentence', '# Triage\n\nYou triage issues. You label them.\n', 'You triage issues.'],
    ['joins a wrapped sentence', 'You are DeerFlow, a helpful\nassistant for teams.\n\nMore.', 'You are DeerFlow, a helpful assistant for teams.'],
    ['keeps a paragraph without a full stop', 'Reviews code', 'Reviews code'],
    ['a version number is no sentence end', 'Uses v1.2 of the API. Then more.', 'Uses v1.2 of the API.'],
    ['nothing but headings', '# Only a title\n', ''],
  ])('%s', (_name, soul, expected) => {
    expect(firstLineOf(soul)).toBe(expected);
  });

  it('cuts a long sentence at 200 characters', () => {
    const line = firstLineOf(`${'word '.repeat(100)}end.`);
    expect(line.length).toBe(200);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe('listAgentOverviews', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function agentsDir(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  }

  it('reads bindings and settings, shows a broken config with its problem, and skips folders that are no agent name', async () => {
    const dir = agentsDir({
      'bot/config.yaml': 'enabled: false\nskills: [deep-research]\ntool_groups: [web]\nchat: {enabled: true}\ngithub:\n  bindings:\n    - repo: a/b\n      triggers: {issues: {}, ping: null}\n    - {}\n',
      'broken/config.yaml': 'description: [unclosed\n',
      'broken/SOUL.md': 'You are broken.',
      'Not_An_Agent/SOUL.md': 'x',
      'lead/SOUL.md': '# Lead\nYou lead.',
    });
    const agents = await listAgentOverviews(dir);
    expect(agents.map((agent) => agent.name)).toEqual(['lead', 'bot', 'broken']);
    expect(agents[0]).toMatchObject({ description: 'You lead.', isInChat: true, problem: null });
    expect(agents[1]).toEqual({
      name: 'bot',
      description: '',
      model: null,
      skills: ['deep-research'],
      tools: ['web'],
      isEnabled: false,
      isInChat: true,
      bindings: [{ repo: 'a/b', events: ['issues', 'ping'] }],
      problem: null,
    });
    expect(agents[2]).toMatchObject({ description: 'You are broken.', problem: 'config.yaml is not valid YAML' });
  });

  it('lists the default agent with the shipped persona when the folder is missing', async () => {
    const fallback = agentsDir({ 'SOUL.md': 'You are the default.' });
    const agents = await listAgentOverviews(join(fallback, 'missing'), join(fallback, 'SOUL.md'));
    expect(agents).toEqual([expect.objectContaining({ name: 'lead', description: 'You are the default.' })]);
  });
});
