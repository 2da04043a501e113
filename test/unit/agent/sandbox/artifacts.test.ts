import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createdFilesText, presentedFiles, resolveOutputFiles } from '../../../../src/agent/sandbox/artifacts.js';
import { SandboxPaths } from '../../../../src/agent/sandbox/paths.js';

const human = (content: string, hidden = false) => ({
  type: 'human',
  content,
  ...(hidden ? { additional_kwargs: { hide_from_ui: true } } : {}),
});
const present = (...filepaths: string[]) => ({
  type: 'ai',
  content: '',
  tool_calls: [{ name: 'present_files', args: { filepaths }, id: 'call', type: 'tool_call' }],
});
const tool = (content: string) => ({ type: 'tool', content, tool_call_id: 'call' });
const ai = (content: string) => ({ type: 'ai', content });

describe('presentedFiles', () => {
  it('takes present_files calls of the current turn only, deduplicated, in order', () => {
    const values = {
      messages: [
        human('first question'),
        present('/mnt/user-data/outputs/old.pdf'),
        tool('Presented 1 file(s)'),
        ai('here is the old report'),
        human('second question'),
        present('/mnt/user-data/outputs/b.png', '/mnt/user-data/outputs/a.csv'),
        tool('Presented 2 file(s)'),
        {
          type: 'ai',
          content: '',
          tool_calls: [
            { name: 'bash', args: { command: 'ls', filepaths: ['/mnt/user-data/outputs/not-presented'] } },
            { name: 'present_files', args: { filepaths: ['/mnt/user-data/outputs/a.csv', '/mnt/user-data/outputs/c.md'] } },
          ],
        },
        ai('done'),
      ],
    };
    expect(presentedFiles(values)).toEqual([
      '/mnt/user-data/outputs/b.png',
      '/mnt/user-data/outputs/a.csv',
      '/mnt/user-data/outputs/c.md',
    ]);
  });

  it('does not end the turn at a hidden human message', () => {
    const values = {
      messages: [
        human('make me a chart'),
        present('/mnt/user-data/outputs/chart.png'),
        human('<memory>the user likes charts</memory>', true),
        ai('chart attached'),
      ],
    };
    expect(presentedFiles(values)).toEqual(['/mnt/user-data/outputs/chart.png']);
  });

  it('reads LangChain-serialized messages (kwargs, id path) and JSON-string arguments', () => {
    const values = {
      messages: [
        { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'go' } },
        {
          lc: 1,
          type: 'constructor',
          id: ['langchain_core', 'messages', 'AIMessage'],
          kwargs: { type: 'ai', content: '', tool_calls: [{ name: 'present_files', args: '{"filepaths":["/mnt/user-data/outputs/x.txt"]}' }] },
        },
      ],
    };
    expect(presentedFiles(values)).toEqual(['/mnt/user-data/outputs/x.txt']);
  });

  it('ignores present_files arguments outside assistant messages and malformed calls', () => {
    const values = {
      messages: [
        human('hi'),
        { type: 'tool', tool_calls: [{ name: 'present_files', args: { filepaths: ['/mnt/user-data/outputs/t.txt'] } }] },
        { type: 'ai', tool_calls: [{ name: 'present_files', args: { filepaths: '/mnt/user-data/outputs/s.txt' } }] },
        { type: 'ai', tool_calls: [{ name: 'present_files', args: '{broken' }] },
        { type: 'ai', tool_calls: [{ name: 'present_files', args: { filepaths: [42, '', '/mnt/user-data/outputs/ok.txt'] } }] },
      ],
    };
    expect(presentedFiles(values)).toEqual(['/mnt/user-data/outputs/ok.txt']);
  });

  it.each([undefined, null, {}, { messages: 'nope' }, { messages: [] }])('finds nothing in %j', (values) => {
    expect(presentedFiles(values)).toEqual([]);
  });
});

describe('resolveOutputFiles', () => {
  let root: string;
  let paths: SandboxPaths;

  beforeEach(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-sandbox-artifacts-')));
    paths = new SandboxPaths({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills'), userId: 'u1', threadId: 't-1' });
    await paths.ensure();
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('resolves regular files under outputs with name, size and a MIME type from the extension', async () => {
    writeFileSync(join(paths.outputsDir, 'chart.PNG'), 'png bytes');
    mkdirSync(join(paths.outputsDir, 'sub'));
    writeFileSync(join(paths.outputsDir, 'sub', 'report.pdf'), '%PDF');
    writeFileSync(join(paths.outputsDir, 'data.unknownext'), '?');
    const { files, unresolved } = await resolveOutputFiles(paths, [
      '/mnt/user-data/outputs/chart.PNG',
      '/mnt/user-data/outputs/sub/report.pdf',
      '/mnt/user-data/outputs/data.unknownext',
    ]);
    expect(unresolved).toEqual([]);
    expect(files).toEqual([
      { hostPath: join(paths.outputsDir, 'chart.PNG'), name: 'chart.PNG', mimeType: 'image/png', isImage: true, size: 9 },
      { hostPath: join(paths.outputsDir, 'sub', 'report.pdf'), name: 'report.pdf', mimeType: 'application/pdf', isImage: false, size: 4 },
      {
        hostPath: join(paths.outputsDir, 'data.unknownext'),
        name: 'data.unknownext',
        mimeType: 'application/octet-stream',
        isImage: false,
        size: 1,
      },
    ]);
  });

  it('leaves unresolved anything that is not a regular file inside this thread’s outputs', async () => {
    writeFileSync(join(paths.outputsDir, 'ok.txt'), 'ok');
    writeFileSync(join(paths.uploadsDir, 'upload.txt'), 'u');
    writeFileSync(join(paths.workspaceDir, 'work.txt'), 'w');
    const secret = join(root, 'secret.txt');
    writeFileSync(secret, 'secret');
    symlinkSync(secret, join(paths.outputsDir, 'escape.txt'));
    symlinkSync(join(paths.uploadsDir, 'upload.txt'), join(paths.outputsDir, 'to-uploads.txt'));
    mkdirSync(join(paths.outputsDir, 'folder'));
    const asked = [
      '/mnt/user-data/uploads/upload.txt',
      '/mnt/user-data/workspace/work.txt',
      '/mnt/user-data/outputs/../uploads/upload.txt',
      '/mnt/user-data/outputs/../../../../secret.txt',
      '/mnt/user-data/outputs/escape.txt',
      '/mnt/user-data/outputs/to-uploads.txt',
      '/mnt/user-data/outputs/folder',
      '/mnt/user-data/outputs/',
      '/mnt/user-data/outputs/missing.txt',
      'outputs/ok.txt',
      secret,
      '/mnt/user-data/outputs/ok.txt',
    ];
    const { files, unresolved } = await resolveOutputFiles(paths, asked);
    expect(files.map((f) => f.name)).toEqual(['ok.txt']);
    expect(unresolved).toEqual(asked.slice(0, -1));
  });

  it('follows a symlink that stays inside outputs', async () => {
    writeFileSync(join(paths.outputsDir, 'real.csv'), 'a,b');
    symlinkSync(join(paths.outputsDir, 'real.csv'), join(paths.outputsDir, 'latest.csv'));
    const { files } = await resolveOutputFiles(paths, ['/mnt/user-data/outputs/latest.csv']);
    expect(files).toEqual([
      { hostPath: join(paths.outputsDir, 'real.csv'), name: 'latest.csv', mimeType: 'text/csv', isImage: false, size: 3 },
    ]);
  });
});

describe('createdFilesText', () => {
  it.each([
    [[], ''],
    [['report.pdf'], 'Created File: 📎 report.pdf'],
    [['a.png', 'b.csv', 'c.md'], 'Created Files: 📎 a.png、b.csv、c.md'],
  ])('%j → %j', (names, expected) => {
    expect(createdFilesText(names)).toBe(expected);
  });
});
