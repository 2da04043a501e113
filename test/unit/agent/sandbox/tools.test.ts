import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, type ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { beforeEach, describe, expect, it } from 'vitest';
import { sandboxConfigSchema } from '../../../../src/agent/sandbox/config.js';
import { createContextResolver } from '../../../../src/agent/sandbox/context.js';
import { SandboxPaths } from '../../../../src/agent/sandbox/paths.js';
import { createSandboxTools } from '../../../../src/agent/sandbox/tools.js';

let root: string;
let tools: Map<string, StructuredToolInterface>;
const runConfig = { configurable: { thread_id: 'thread-1', user_id: 'user-1', channel_user_id: '4242' } };

function hostDir(area: 'workspace' | 'uploads' | 'outputs'): string {
  return join(root, 'data', 'users', 'user-1', 'threads', 'thread-1', 'user-data', area);
}

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-sandbox-tools-')));
  mkdirSync(join(root, 'skills', 'public'), { recursive: true });
  writeFileSync(join(root, 'skills', 'public', 'SKILL.md'), 'skill body');
  const list = createSandboxTools({
    resolveContext: createContextResolver({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills') }),
    config: sandboxConfigSchema.parse({ max_read_chars: 50 }),
    baseEnv: { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-leak' },
  });
  tools = new Map(list.map((t) => [t.name, t]));
  for (const area of ['workspace', 'uploads', 'outputs'] as const) mkdirSync(hostDir(area), { recursive: true });
});

async function call(name: string, args: Record<string, unknown>, config: object = runConfig): Promise<string> {
  const result: unknown = await tools.get(name)!.invoke({ description: 'test', ...args }, config);
  expect(typeof result).toBe('string');
  return result as string;
}

/** Runs tool calls the way the agent graph does, through ToolNode. */
async function viaToolNode(name: string, args: Record<string, unknown>): Promise<ToolMessage> {
  const node = new ToolNode([...tools.values()]);
  const message = new AIMessage({ content: '', tool_calls: [{ id: 'call-1', name, args }] });
  const { messages } = (await node.invoke({ messages: [message] }, runConfig)) as { messages: ToolMessage[] };
  expect(messages).toHaveLength(1);
  return messages[0]!;
}

describe('createSandboxTools', () => {
  it('exposes exactly the seven tools with their model-facing arguments', () => {
    expect([...tools.keys()]).toEqual(['bash', 'ls', 'read_file', 'write_file', 'str_replace', 'present_files', 'view_image']);
    const keys = (name: string) => Object.keys((tools.get(name)!.schema as { shape: object }).shape);
    expect(keys('bash')).toEqual(['description', 'command']);
    expect(keys('ls')).toEqual(['description', 'path']);
    expect(keys('read_file')).toEqual(['description', 'path', 'start_line', 'end_line']);
    expect(keys('write_file')).toEqual(['description', 'path', 'content', 'append']);
    expect(keys('str_replace')).toEqual(['description', 'path', 'old_str', 'new_str', 'replace_all']);
    expect(keys('present_files')).toEqual(['filepaths']);
    expect(keys('view_image')).toEqual(['path']);
  });

  it('round-trips write_file and read_file, with append and line ranges', async () => {
    expect(await call('write_file', { path: '/mnt/user-data/workspace/notes/a.txt', content: 'one\ntwo\n' })).toBe('OK');
    expect(await call('write_file', { path: 'notes/a.txt', content: 'three\n', append: true })).toBe('OK');
    expect(readFileSync(join(hostDir('workspace'), 'notes', 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await call('read_file', { path: '/mnt/user-data/workspace/notes/a.txt' })).toBe('one\ntwo\nthree\n');
    expect(await call('read_file', { path: 'notes/a.txt', start_line: 2, end_line: 3 })).toBe('two\nthree');
    expect(await call('write_file', { path: 'notes/a.txt', content: 'replaced' })).toBe('OK');
    expect(await call('read_file', { path: 'notes/a.txt' })).toBe('replaced');
  });

  it('cuts read_file at max_read_chars with a note', async () => {
    await call('write_file', { path: 'long.txt', content: 'x'.repeat(80) });
    const text = await call('read_file', { path: 'long.txt' });
    expect(text).toBe(`${'x'.repeat(50)}\n[... truncated at 50 of 80 characters; read further with start_line/end_line ...]`);
  });

  it('refuses to read binary files and directories', async () => {
    writeFileSync(join(hostDir('uploads'), 'blob.bin'), Buffer.from([1, 0, 2]));
    expect(await call('read_file', { path: '/mnt/user-data/uploads/blob.bin' })).toMatch(/^Error: .*is a binary file \(3 bytes\)/);
    expect(await call('read_file', { path: '/mnt/user-data/uploads' })).toMatch(/^Error: .*is a directory/);
  });

  it('reads /mnt/skills but refuses writing there', async () => {
    expect(await call('read_file', { path: '/mnt/skills/public/SKILL.md' })).toBe('skill body');
    expect(await call('write_file', { path: '/mnt/skills/public/SKILL.md', content: 'x' })).toBe(
      "Error: path '/mnt/skills/public/SKILL.md' is read-only",
    );
    expect(readFileSync(join(root, 'skills', 'public', 'SKILL.md'), 'utf8')).toBe('skill body');
  });

  it.each([
    ['read_file', { path: '../../etc/passwd' }, /must not contain '\.\.'/],
    ['read_file', { path: '/etc/passwd' }, /outside the sandbox/],
    ['write_file', { path: '/tmp/evil.txt', content: 'x' }, /outside the sandbox/],
    ['ls', { path: '/' }, /outside the sandbox/],
  ])('%s refuses %j with an error message', async (name, args, reason) => {
    const text = await call(name, args);
    expect(text).toMatch(/^Error: /);
    expect(text).toMatch(reason);
  });

  it('refuses reading and writing through a symlink to /etc without naming host paths', async () => {
    symlinkSync('/etc', join(hostDir('workspace'), 'etc'));
    const read = await call('read_file', { path: '/mnt/user-data/workspace/etc/hostname' });
    expect(read).toMatch(/^Error: .*resolves outside the sandbox/);
    expect(read).not.toContain(root);
    expect(await call('write_file', { path: 'etc/evil', content: 'x' })).toMatch(/^Error: .*outside/);
  });

  it('str_replace needs a unique match unless replace_all, and explains zero matches', async () => {
    await call('write_file', { path: 'code.ts', content: 'let a = 1;\nlet b = 1;\n' });
    expect(await call('str_replace', { path: 'code.ts', old_str: 'let a', new_str: 'const a' })).toBe('OK');
    expect(await call('read_file', { path: 'code.ts' })).toBe('const a = 1;\nlet b = 1;\n');
    expect(await call('str_replace', { path: 'code.ts', old_str: '= 1', new_str: '= 2' })).toBe(
      "Error: old_str occurs 2 times in '/mnt/user-data/workspace/code.ts'; include more surrounding text to make it unique, or set replace_all",
    );
    expect(await call('read_file', { path: 'code.ts' })).toBe('const a = 1;\nlet b = 1;\n');
    expect(await call('str_replace', { path: 'code.ts', old_str: '= 1', new_str: '= $&2', replace_all: true })).toBe('OK');
    expect(await call('read_file', { path: 'code.ts' })).toBe('const a = $&2;\nlet b = $&2;\n');
    expect(await call('str_replace', { path: 'code.ts', old_str: 'missing', new_str: 'x' })).toBe(
      "Error: old_str not found in '/mnt/user-data/workspace/code.ts'",
    );
    expect(await call('str_replace', { path: 'nope.ts', old_str: 'a', new_str: 'b' })).toBe(
      "Error: '/mnt/user-data/workspace/nope.ts' does not exist",
    );
  });

  it('ls lists two levels with virtual paths, and explains a missing directory', async () => {
    await call('write_file', { path: 'a/b/c/deep.txt', content: 'x' });
    await call('write_file', { path: 'top.txt', content: 'x' });
    expect(await call('ls', { path: '/mnt/user-data/workspace' })).toBe(
      ['/mnt/user-data/workspace/a/', '  /mnt/user-data/workspace/a/b/', '/mnt/user-data/workspace/top.txt'].join('\n'),
    );
    expect(await call('ls', { path: '/mnt/user-data/workspace/missing' })).toBe(
      "Error: '/mnt/user-data/workspace/missing' does not exist",
    );
    expect(await call('ls', { path: 'top.txt' })).toMatch(/^Error: .*is not a directory/);
  });

  it('bash runs in the workspace with virtual paths, a scrubbed env and the per-call user id', async () => {
    const text = await call('bash', {
      command: 'pwd; echo hi > /mnt/user-data/outputs/r.txt; echo "user=$DEERFLOW_CHANNEL_USER_ID key=$OPENAI_API_KEY"',
    });
    expect(text).toBe('/mnt/user-data/workspace\nuser=4242 key=\n');
    expect(readFileSync(join(hostDir('outputs'), 'r.txt'), 'utf8')).toBe('hi\n');
    expect(await call('bash', { command: 'ls /mnt/user-data/nope' })).toMatch(
      /^ls: cannot access '\/mnt\/user-data\/nope': No such file or directory\n\n\[exit code 2\]$/,
    );
  });

  it('bash reports a timeout as an error with advice', async () => {
    const slow = createSandboxTools({
      resolveContext: createContextResolver({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills') }),
      config: sandboxConfigSchema.parse({ bash_timeout_seconds: 0.3 }),
      baseEnv: { PATH: process.env.PATH },
    })[0]!;
    const text = (await slow.invoke({ description: 'd', command: 'echo before; sleep 30' }, runConfig)) as string;
    expect(text).toMatch(/^Error: command timed out after 0\.3 s and was killed\. Run long-lived processes in the background/);
    expect(text).toContain('before');
  });

  it('present_files accepts outputs files only and carries the accepted paths as an artifact', async () => {
    await call('write_file', { path: '/mnt/user-data/outputs/report.md', content: '# r' });
    await call('write_file', { path: 'draft.md', content: '# d' });
    const ok = await viaToolNode('present_files', { filepaths: ['/mnt/user-data/outputs/report.md'] });
    expect(ok.content).toBe('Presented 1 file(s): /mnt/user-data/outputs/report.md');
    expect(ok.artifact).toEqual({ filepaths: ['/mnt/user-data/outputs/report.md'] });

    const refused = await viaToolNode('present_files', { filepaths: ['/mnt/user-data/workspace/draft.md'] });
    expect(refused.content).toBe("Error: no files presented. '/mnt/user-data/workspace/draft.md' is not under /mnt/user-data/outputs");
    expect(refused.artifact).toEqual({ filepaths: [] });

    const mixed = await viaToolNode('present_files', {
      filepaths: ['/mnt/user-data/outputs/report.md', '/mnt/user-data/outputs/missing.md', '../../etc/passwd'],
    });
    expect(mixed.content).toMatch(/^Presented 1 file\(s\): .*Refused: '\/mnt\/user-data\/outputs\/missing.md' does not exist; path '..\/..\/etc\/passwd' must not contain/);
    expect(mixed.artifact).toEqual({ filepaths: ['/mnt/user-data/outputs/report.md'] });
  });

  it('turns malformed arguments into an error tool message in ToolNode, not a crashed run', async () => {
    const message = await viaToolNode('write_file', { description: 'd', path: 42 });
    expect(message.status).toBe('error');
    expect(String(message.content)).toMatch(/^Error: Received tool input did not match expected schema/);
  });

  it('returns an error, not an exception, when the run has no thread', async () => {
    expect(await call('ls', { path: '/mnt/user-data' }, {})).toBe('Error: the sandbox needs a thread; this run has none');
    expect(await call('ls', { path: '/mnt/user-data' }, { configurable: { thread_id: '../x' } })).toBe(
      "Error: invalid thread id: only letters, digits, '_' and '-' are allowed",
    );
  });
});

describe('createContextResolver', () => {
  it("builds paths for the configurable thread and user and exports the sender's platform id", () => {
    const resolve = createContextResolver({ dataDir: '/d', skillsDir: '/s' });
    const context = resolve(runConfig);
    expect(context.paths).toBeInstanceOf(SandboxPaths);
    expect(context.paths.workspaceDir).toBe('/d/users/user-1/threads/thread-1/user-data/workspace');
    expect(context.perCallEnv).toEqual({ DEERFLOW_CHANNEL_USER_ID: '4242' });
    // Not a chat run, or an unusable id: nothing is exported (each call's environment starts clean).
    expect(resolve({ configurable: { thread_id: 't', user_id: 'u' } }).perCallEnv).toEqual({});
    expect(resolve({ configurable: { thread_id: 't', user_id: 'u', channel_user_id: 'x'.repeat(257) } }).perCallEnv).toEqual({});
  });
});
