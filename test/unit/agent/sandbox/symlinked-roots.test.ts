import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveOutputFiles } from '../../../../src/agent/sandbox/artifacts.js';
import { sandboxConfigSchema } from '../../../../src/agent/sandbox/config.js';
import { createContextResolver } from '../../../../src/agent/sandbox/context.js';
import { SandboxError, SandboxPaths } from '../../../../src/agent/sandbox/paths.js';
import { createSandboxTools } from '../../../../src/agent/sandbox/tools.js';
import { saveUploads } from '../../../../src/agent/sandbox/uploads.js';

/**
 * Attack: an unsandboxed shell (or anything with the server's rights) replaces a thread folder,
 * or a folder above it, with a symlink to the host (`ln -s /etc outputs`). The file tools, file
 * delivery and uploads must refuse from then on, in this turn and every later one.
 */

let root: string;
let outside: string;
let tools: Map<string, StructuredToolInterface>;
const runConfig = { configurable: { thread_id: 'thread-1', user_id: 'alice' } };
let paths: SandboxPaths;

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-symlinked-roots-')));
  outside = join(root, 'host-etc');
  mkdirSync(outside);
  writeFileSync(join(outside, 'passwd'), 'root:x:0:0:host secret');
  const dataDir = join(root, 'data');
  const list = createSandboxTools({
    resolveContext: createContextResolver({ dataDir, skillsDir: join(root, 'skills') }),
    config: sandboxConfigSchema.parse({ isolation: 'none' }),
    baseEnv: { PATH: process.env.PATH },
  });
  tools = new Map(list.map((tool) => [tool.name, tool]));
  paths = new SandboxPaths({ dataDir, skillsDir: join(root, 'skills'), userId: 'alice', threadId: 'thread-1' });
  await paths.ensure();
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Swaps a host folder for a symlink to the "host" folder, as `rm -rf x && ln -s /etc x` would. */
function replaceWithLink(hostDir: string): void {
  renameSync(hostDir, `${hostDir}.gone`);
  symlinkSync(outside, hostDir);
}

async function call(name: string, args: Record<string, unknown>): Promise<string> {
  return (await tools.get(name)!.invoke({ description: 'test', ...args }, runConfig)) as string;
}

async function present(filepaths: string[]): Promise<ToolMessage> {
  const node = new ToolNode([...tools.values()]);
  const message = new AIMessage({ content: '', tool_calls: [{ id: 'c', name: 'present_files', args: { filepaths } }] });
  const { messages } = (await node.invoke({ messages: [message] }, runConfig)) as { messages: ToolMessage[] };
  return messages[0]!;
}

describe.each([
  ['outputs', () => paths.outputsDir, '/mnt/user-data/outputs'],
  ['workspace', () => paths.workspaceDir, '/mnt/user-data/workspace'],
  ['uploads', () => paths.uploadsDir, '/mnt/user-data/uploads'],
  ['user-data', () => paths.userDataDir, '/mnt/user-data/outputs'],
  ['the thread folder', () => join(paths.userDataDir, '..'), '/mnt/user-data/outputs'],
  ["the user's folder", () => join(paths.userDataDir, '..', '..', '..'), '/mnt/user-data/outputs'],
])('when %s is replaced by a symlink to the host', (_name, hostDir, virtualDir) => {
  beforeEach(() => replaceWithLink(hostDir()));

  it('read_file, ls, write_file and str_replace refuse, naming no host path', async () => {
    for (const text of [
      await call('read_file', { path: `${virtualDir}/passwd` }),
      await call('ls', { path: virtualDir }),
      await call('write_file', { path: `${virtualDir}/evil`, content: 'x' }),
      await call('str_replace', { path: `${virtualDir}/passwd`, old_str: 'root', new_str: 'toor' }),
    ]) {
      expect(text).toMatch(/^Error: .*not a real directory/);
      expect(text).not.toContain('host secret');
      expect(text).not.toContain(root);
    }
  });

  it('present_files and file delivery refuse, also in a later turn', async () => {
    const presented = await present(['/mnt/user-data/outputs/passwd']);
    expect(presented.content).toMatch(/^Error: .*not a real directory/);
    expect(presented.artifact).toEqual({ filepaths: [] });
    for (let turn = 0; turn < 2; turn++) {
      const later = new SandboxPaths({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills'), userId: 'alice', threadId: 'thread-1' });
      expect(await resolveOutputFiles(later, ['/mnt/user-data/outputs/passwd'])).toEqual({ files: [], unresolved: ['/mnt/user-data/outputs/passwd'] });
    }
  });

  it('uploads are refused, and nothing is written through the link', async () => {
    await expect(saveUploads(paths, [{ name: 'x.txt', bytes: new Uint8Array([1]), isImage: false }])).rejects.toThrow(SandboxError);
    await expect(paths.mounts()).rejects.toThrow(/not a real directory/);
    expect(() => realpathSync(join(outside, 'x.txt'))).toThrow();
  });
});
