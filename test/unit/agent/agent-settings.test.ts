import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAgentSettings } from '../../../src/agent/agent-settings.js';
import { ConfigError } from '../../../src/errors.js';

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

describe('loadAgentSettings', () => {
  it("reads an agent's sandbox.network and ignores the other keys", async () => {
    agent('triage', 'name: triage\ngithub: { bindings: [] }\nsandbox:\n  network: false\n');
    expect(await loadAgentSettings(agentsDir, 'triage')).toEqual({ sandbox: { network: false } });
  });

  it('means no override without a file, a block or a value', async () => {
    agent('plain');
    agent('empty', '');
    agent('blank', 'sandbox:\n');
    for (const name of ['plain', 'missing', 'empty', 'blank']) expect(await loadAgentSettings(agentsDir, name)).toEqual({ sandbox: {} });
  });

  it('refuses an invalid block instead of falling back to the network', async () => {
    agent('typo', 'sandbox: { network: "off" }\n');
    agent('unknown', 'sandbox: { netwrok: false }\n');
    agent('broken', 'sandbox: [\n');
    await expect(loadAgentSettings(agentsDir, 'typo')).rejects.toThrow(/agents\/typo\/config\.yaml: sandbox\.network: must be true or false/);
    await expect(loadAgentSettings(agentsDir, 'unknown')).rejects.toThrow(ConfigError);
    await expect(loadAgentSettings(agentsDir, 'broken')).rejects.toThrow(/not valid YAML/);
  });

  it("reads an agent's MCP allow-list; an empty list offers none, no list offers all", async () => {
    agent('support', 'mcp_tools: [orders, docs__search]\n');
    agent('quiet', 'mcp_tools: []\n');
    agent('open', 'mcp_tools:\n');
    expect(await loadAgentSettings(agentsDir, 'support')).toEqual({ sandbox: {}, mcpTools: ['orders', 'docs__search'] });
    expect(await loadAgentSettings(agentsDir, 'quiet')).toEqual({ sandbox: {}, mcpTools: [] });
    expect(await loadAgentSettings(agentsDir, 'open')).toEqual({ sandbox: {} });
  });

  it('refuses an allow-list that is not a list of names', async () => {
    agent('wrong', 'mcp_tools: orders\n');
    await expect(loadAgentSettings(agentsDir, 'wrong')).rejects.toThrow(/agents\/wrong\/config\.yaml: mcp_tools: must be a list of MCP server or tool names/);
  });

  it('sees an edit, a new file and a removed one at the next call', async () => {
    agent('edited');
    expect(await loadAgentSettings(agentsDir, 'edited')).toEqual({ sandbox: {} });
    writeFileSync(join(agentsDir, 'edited', 'config.yaml'), 'sandbox: { network: false }\n');
    expect(await loadAgentSettings(agentsDir, 'edited')).toEqual({ sandbox: { network: false } });
    writeFileSync(join(agentsDir, 'edited', 'config.yaml'), 'sandbox: { network: true }\n');
    expect(await loadAgentSettings(agentsDir, 'edited')).toEqual({ sandbox: { network: true } });
    writeFileSync(join(agentsDir, 'edited', 'config.yaml'), 'sandbox: [\n');
    await expect(loadAgentSettings(agentsDir, 'edited')).rejects.toThrow(/not valid YAML/);
    rmSync(join(agentsDir, 'edited', 'config.yaml'));
    expect(await loadAgentSettings(agentsDir, 'edited')).toEqual({ sandbox: {} });
  });
});
