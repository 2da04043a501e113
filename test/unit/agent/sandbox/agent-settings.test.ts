import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentSandboxSettings } from '../../../../src/agent/sandbox/agent-settings.js';
import { ConfigError } from '../../../../src/errors.js';

let agentsDir: string;

beforeEach(() => {
  agentsDir = mkdtempSync(join(tmpdir(), 'dfc-agent-settings-'));
});

afterEach(() => {
  rmSync(agentsDir, { recursive: true, force: true });
});

function agent(name: string, configYaml?: string): void {
  mkdirSync(join(agentsDir, name), { recursive: true });
  if (configYaml !== undefined) writeFileSync(join(agentsDir, name, 'config.yaml'), configYaml);
}

describe('loadAgentSandboxSettings', () => {
  it("reads an agent's sandbox.network and ignores the other keys", async () => {
    agent('triage', 'name: triage\ngithub: { bindings: [] }\nsandbox:\n  network: false\n');
    expect(await loadAgentSandboxSettings(agentsDir, 'triage')).toEqual({ network: false });
  });

  it('means no override without a file, a block or a value', async () => {
    agent('plain');
    agent('empty', '');
    agent('blank', 'sandbox:\n');
    expect(await loadAgentSandboxSettings(agentsDir, 'plain')).toEqual({});
    expect(await loadAgentSandboxSettings(agentsDir, 'missing')).toEqual({});
    expect(await loadAgentSandboxSettings(agentsDir, 'empty')).toEqual({});
    expect(await loadAgentSandboxSettings(agentsDir, 'blank')).toEqual({});
  });

  it('refuses an invalid block instead of falling back to the network', async () => {
    agent('typo', 'sandbox: { network: "off" }\n');
    agent('unknown', 'sandbox: { netwrok: false }\n');
    agent('broken', 'sandbox: [\n');
    await expect(loadAgentSandboxSettings(agentsDir, 'typo')).rejects.toThrow(/agents\/typo\/config\.yaml: sandbox\.network: must be true or false/);
    await expect(loadAgentSandboxSettings(agentsDir, 'unknown')).rejects.toThrow(ConfigError);
    await expect(loadAgentSandboxSettings(agentsDir, 'broken')).rejects.toThrow(/not valid YAML/);
  });
});
