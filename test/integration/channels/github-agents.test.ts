import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitHubAgentRegistry, loadGitHubAgents } from '../../../channels/github/agents.js';
import { createLogger, type Logger } from '../../../src/logger.js';

const SHIPPED_AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));
const WARN = 40;

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

function captureLogs(): { logger: Logger; warnings: () => LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  return { logger, warnings: () => lines.filter((line) => line.level === WARN) };
}

const CODER = `
description: Fixes bugs
owner: user-1
github:
  installation_id: 7
  bindings:
    - repo: Octo-Org/Hello-World
      triggers:
        issue_comment: {}
        pull_request: {require_mention: true}
`;

let agentsDir: string;

function writeAgent(name: string, config: string | undefined, soul?: string): void {
  mkdirSync(join(agentsDir, name), { recursive: true });
  if (config !== undefined) writeFileSync(join(agentsDir, name, 'config.yaml'), config);
  if (soul !== undefined) writeFileSync(join(agentsDir, name, 'SOUL.md'), soul);
}

beforeEach(() => {
  agentsDir = mkdtempSync(join(tmpdir(), 'dfc-gh-agents-'));
});

afterEach(() => {
  rmSync(agentsDir, { recursive: true, force: true });
});

describe('loadGitHubAgents', () => {
  it('loads valid agents and skips broken ones with one warning each', async () => {
    writeAgent('coder', CODER, 'You fix bugs.');
    writeAgent('broken-yaml', 'github: {bindings: [\n', 'x');
    writeAgent(
      'twice',
      'github:\n  bindings:\n    - repo: a/b\n      triggers: {issues: {}}\n    - repo: A/B\n      triggers: {ping: {}}\n',
    );
    writeAgent('renamed', 'name: other\ngithub: {bindings: []}\n');
    writeAgent('lead', undefined, 'default agent');
    writeAgent('plain', 'description: no github block\n');
    writeAgent('no-config', undefined, 'just a soul');
    writeFileSync(join(agentsDir, 'README.md'), 'not an agent');
    const { logger, warnings } = captureLogs();

    const agents = await loadGitHubAgents(agentsDir, logger);

    expect(agents.map((agent) => agent.name)).toEqual(['coder']);
    expect(agents[0]).toMatchObject({
      name: 'coder',
      description: 'Fixes bugs',
      isEnabled: true,
      owner: 'user-1',
      soul: 'You fix bugs.',
      github: { installation_id: 7, trusted_authors: 'write' },
    });
    const byFile = Object.fromEntries(warnings().map((line) => [line.file, line.reason]));
    expect(Object.keys(byFile).sort()).toEqual(['broken-yaml/config.yaml', 'renamed/config.yaml', 'twice/config.yaml']);
    expect(byFile['broken-yaml/config.yaml']).toMatch(/^invalid YAML at line \d+/);
    expect(byFile['twice/config.yaml']).toContain('duplicate binding for repo A/B');
    expect(byFile['renamed/config.yaml']).toContain("name 'other' does not match its folder 'renamed'");
    for (const line of warnings()) expect(JSON.stringify(line)).not.toContain(agentsDir);
  });

  it('means no agents when the folder does not exist', async () => {
    expect(await loadGitHubAgents(join(agentsDir, 'missing'), captureLogs().logger)).toEqual([]);
  });

  it('parses the shipped triage agent, disabled', async () => {
    const { logger, warnings } = captureLogs();
    const agents = await loadGitHubAgents(SHIPPED_AGENTS_DIR, logger);
    const triage = agents.find((agent) => agent.name === 'triage');
    expect(warnings()).toEqual([]);
    expect(triage).toMatchObject({ isEnabled: false, github: { bindings: [] } });
    expect(triage?.soul).toContain('gh issue comment <number> --repo <owner/name> --body');
    expect(triage?.soul).toContain('--add-label');
    expect(triage?.soul).toMatch(/Never @-mention yourself/);
  });
});

describe('GitHubAgentRegistry', () => {
  it('indexes enabled agents by repo (any case) and listed event, with defaults merged', async () => {
    writeAgent('coder', CODER);
    writeAgent('reviewer', 'github:\n  bindings:\n    - repo: octo-org/hello-world\n      triggers: {issue_comment: {mention_login: rev}}\n');
    writeAgent('sleeper', `enabled: false\n${CODER}`);
    const registry = await GitHubAgentRegistry.load({ agentsDir, logger: captureLogs().logger });

    const comments = registry.matches('octo-org/HELLO-world', 'issue_comment');
    expect(comments.map((match) => match.agent.name)).toEqual(['coder', 'reviewer']);
    expect(comments[0]!.trigger).toEqual({ actions: null, requireMention: true, allowAuthors: [], mentionLogin: undefined });
    expect(comments[1]!.trigger.mentionLogin).toBe('rev');
    expect(registry.matches('Octo-Org/Hello-World', 'pull_request')[0]!.trigger).toEqual({
      actions: ['opened'],
      requireMention: true,
      allowAuthors: [],
      mentionLogin: undefined,
    });
    expect(registry.matches('Octo-Org/Hello-World', 'issues')).toEqual([]);
    expect(registry.matches('other/repo', 'issue_comment')).toEqual([]);
    expect(registry.agents().map((agent) => agent.name)).toEqual(['coder', 'reviewer', 'sleeper']);
  });

  it('reloads when a config, a SOUL or the set of folders changes, at most once per second', async () => {
    writeAgent('coder', CODER, 'v1');
    let nowMs = 10_000;
    const registry = await GitHubAgentRegistry.load({ agentsDir, logger: captureLogs().logger, now: () => nowMs });
    expect(registry.matches('octo-org/hello-world', 'issues')).toEqual([]);

    writeAgent('coder', CODER.replace('issue_comment: {}', 'issues: {}'));
    // Explicit mtimes: two writes within one clock tick must still count as a change.
    utimesSync(join(agentsDir, 'coder', 'config.yaml'), 1_000, 1_000);
    nowMs += 500;
    expect(await registry.reloadIfChanged()).toBe(false);
    expect(registry.matches('octo-org/hello-world', 'issues')).toEqual([]);

    nowMs += 600;
    expect(await registry.reloadIfChanged()).toBe(true);
    expect(registry.matches('octo-org/hello-world', 'issues').map((match) => match.agent.name)).toEqual(['coder']);

    nowMs += 1_000;
    expect(await registry.reloadIfChanged()).toBe(false);

    writeFileSync(join(agentsDir, 'coder', 'SOUL.md'), 'v2, longer');
    nowMs += 1_000;
    expect(await registry.reloadIfChanged()).toBe(true);
    expect(registry.agents()[0]!.soul).toBe('v2, longer');

    writeAgent('reviewer', 'github:\n  bindings:\n    - repo: octo-org/hello-world\n      triggers: {issues: {}}\n');
    nowMs += 1_000;
    expect(await registry.reloadIfChanged()).toBe(true);
    expect(registry.matches('octo-org/hello-world', 'issues')).toHaveLength(2);

    rmSync(join(agentsDir, 'reviewer'), { recursive: true });
    nowMs += 1_000;
    expect(await registry.reloadIfChanged()).toBe(true);
    expect(registry.matches('octo-org/hello-world', 'issues')).toHaveLength(1);
  });
});
