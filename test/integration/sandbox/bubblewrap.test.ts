import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { probeBubblewrap, sandboxUserFor, systemLayout, UNPRIVILEGED_ID } from '../../../src/agent/sandbox/bubblewrap.js';
import { sandboxConfigSchema } from '../../../src/agent/sandbox/config.js';
import { createContextResolver, SANDBOX_NETWORK_KEY } from '../../../src/agent/sandbox/context.js';
import { createSandboxTools } from '../../../src/agent/sandbox/tools.js';

/**
 * The shell in a real bubblewrap, as a granted user's `bash` tool runs it. Linux only; there a
 * missing or broken bwrap fails these tests (CI installs the bubblewrap package), never skips them.
 */

const SECRET = 'server-secret-4c1d';
const user = sandboxUserFor(process.getuid?.());
let root: string;
let dataDir: string;
let skillsDir: string;
let configFile: string;
let bobFile: string;
let listener: Server;
let port: number;

let bwrapPath = '';

function toolsFor(options: { network?: boolean; timeoutSeconds?: number } = {}, name = 'bash'): StructuredToolInterface {
  const tools = createSandboxTools({
    resolveContext: createContextResolver({ dataDir, skillsDir, owner: user }),
    config: sandboxConfigSchema.parse({
      bash_timeout_seconds: options.timeoutSeconds ?? 20,
      ...(options.network === undefined ? {} : { network: options.network }),
    }),
    // The server's environment, secrets included: only the allow-list may get through.
    baseEnv: { ...process.env, OPENAI_API_KEY: SECRET, BOT_CREDS: SECRET, DATABASE_URL: `postgres://u:${SECRET}@db/x` },
    bubblewrap: { bwrapPath, user, system: systemLayout(), hidden: [] },
  });
  return tools.find((tool) => tool.name === name)!;
}

async function bash(command: string, options: { userId?: string; network?: boolean; tool?: StructuredToolInterface } = {}): Promise<string> {
  const configurable: Record<string, unknown> = { thread_id: 'thread-1', user_id: options.userId ?? 'alice' };
  if (options.network !== undefined) configurable[SANDBOX_NETWORK_KEY] = options.network;
  return (await (options.tool ?? toolsFor()).invoke({ description: 'test', command }, { configurable })) as string;
}

/** Host processes whose command line contains `marker`. */
function hostProcessesWith(marker: string): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    });
}

describe.skipIf(process.platform !== 'linux')('bash in bubblewrap', () => {
  beforeAll(async () => {
    process.env.DFC_SANDBOX_TEST_SECRET = SECRET; // In this process's own environment, as the server's are.
    const probe = await probeBubblewrap({ searchPath: process.env.PATH, user });
    if (!probe.isAvailable) throw new Error(`bubblewrap is required for these tests: ${probe.reason}`);
    bwrapPath = probe.bwrapPath;
    root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-bwrap-')));
    dataDir = join(root, 'data');
    skillsDir = join(root, 'skills');
    mkdirSync(join(skillsDir, 'public'), { recursive: true });
    writeFileSync(join(skillsDir, 'public', 'SKILL.md'), 'skill body');
    mkdirSync(join(dataDir, 'pglite'), { recursive: true });
    writeFileSync(join(dataDir, 'pglite', 'PG_VERSION'), SECRET);
    configFile = join(root, 'config.yaml');
    writeFileSync(configFile, `auth: { admin_token: ${SECRET} }\n`);
    const bobOutputs = join(dataDir, 'users', 'bob', 'threads', 'thread-1', 'user-data', 'outputs');
    mkdirSync(bobOutputs, { recursive: true });
    bobFile = join(bobOutputs, 'diary.txt');
    writeFileSync(bobFile, SECRET);
    listener = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });

  afterAll(async () => {
    delete process.env.DFC_SANDBOX_TEST_SECRET;
    await new Promise((resolve) => listener?.close(resolve));
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  it("runs in the workspace at its virtual path, as an unprivileged user when the server is root", async () => {
    const text = await bash('pwd; echo "home=$HOME"; id -u; echo hi > /mnt/user-data/outputs/hi.txt');
    const expectedUid = user === undefined ? String(process.getuid?.()) : String(UNPRIVILEGED_ID);
    expect(text).toBe(`/mnt/user-data/workspace\nhome=/mnt/user-data/workspace\n${expectedUid}\n`);
    expect(readFileSync(join(dataDir, 'users', 'alice', 'threads', 'thread-1', 'user-data', 'outputs', 'hi.txt'), 'utf8')).toBe('hi\n');
  });

  it("reports the command's exit code and stderr as an unsandboxed shell does", async () => {
    expect(await bash('echo out; echo err >&2; exit 3')).toBe('out\nerr\n\n[exit code 3]');
    expect(await bash('true')).toBe('(no output)');
  });

  it("cannot read bob's files, the database folder or the config file, by host path or by climbing", async () => {
    const text = await bash(
      [
        `cat ${bobFile}`,
        `cat ${join(dataDir, 'pglite', 'PG_VERSION')}`,
        `cat ${configFile}`,
        `ls ${dataDir}`,
        'cd ../../../../../.. && pwd && ls',
        `cat ../../../../../../${bobFile}`,
        `ls ${process.cwd()}`,
        'ls /root /home /work /mnt',
      ].join('; '),
    );
    expect(text).not.toContain(SECRET);
    expect(text).toMatch(/No such file or directory/);
    // Climbing ends at the sandbox's own root: the system, the sandbox mounts, nothing else.
    expect(text).toMatch(/^\/\n(?:bin\n)?dev\n(?:etc\n)?(?:lib\n)?(?:lib64\n)?mnt\nproc\n(?:sbin\n)?tmp\nusr\n/m);
  });

  it("sees no process of the server: /proc holds only the sandbox's own, with no secret in any environ", async () => {
    const text = await bash(
      [
        `cat /proc/${process.pid}/environ`,
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/1/environ",
        'cat /proc/[0-9]*/environ | tr "\\0" "\\n" | grep -c . >/dev/null',
        'echo "processes: $(ps -eo comm= | sort -u | tr "\\n" " ")"',
      ].join('; '),
    );
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/OPENAI_API_KEY|BOT_CREDS|DATABASE_URL|DFC_SANDBOX_TEST_SECRET/);
    // bwrap (PID 1), the shells and what this command runs: no server, no test runner, nothing of the host.
    const processes = (/processes: (.*)/.exec(text)?.[1] ?? '').trim().split(' ');
    expect(processes).toContain('bwrap');
    expect(processes.filter((name) => !['bwrap', 'bash', 'ps', 'sort', 'tr', 'setpriv'].includes(name))).toEqual([]);
  });

  it('shows only allow-listed variables in env, plus those a shell sets itself', async () => {
    const names = (await bash('env | cut -d= -f1 | sort')).trim().split('\n');
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM', 'PWD', 'OLDPWD', 'SHLVL', '_']);
    expect(names.filter((name) => !allowed.has(name))).toEqual([]);
    expect(await bash('echo "$PATH"')).toBe('/usr/local/bin:/usr/bin:/bin\n');
  });

  it('can write only in the three thread folders; /tmp is private and /mnt/skills read-only', async () => {
    const marker = `dfc-private-${process.pid}`;
    const text = await bash(
      [
        'for f in /etc/x /usr/x /x /mnt/x /mnt/user-data/x /mnt/skills/x /mnt/skills/public/SKILL.md; do (echo x > $f) 2>/dev/null && echo "wrote $f"; done',
        'for d in workspace uploads outputs; do echo x > /mnt/user-data/$d/ok && echo "ok $d"; done',
        `echo x > /tmp/${marker} && echo tmp-ok`,
        'cat /mnt/skills/public/SKILL.md',
      ].join('; '),
    );
    expect(text).toBe('ok workspace\nok uploads\nok outputs\ntmp-ok\nskill body');
    expect(existsSync(join(tmpdir(), marker))).toBe(false);
    expect(readFileSync(join(skillsDir, 'public', 'SKILL.md'), 'utf8')).toBe('skill body');
  });

  it('cannot replace a thread folder with a symlink from inside (they are mount points)', async () => {
    const text = await bash('rm -rf /mnt/user-data/outputs 2>&1; ln -s /etc /mnt/user-data/outputs 2>&1; echo done');
    expect(text).toMatch(/done/);
    const outputs = join(dataDir, 'users', 'alice', 'threads', 'thread-1', 'user-data', 'outputs');
    expect(readdirSync(outputs)).toBeDefined(); // Still a real folder on the host.
  });

  it('reaches a 127.0.0.1 listener with the network on, and cannot with it off (config or per run)', async () => {
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n1 <&3 || echo refused`;
    expect(await bash(connect)).toBe('hello\n');
    expect(await bash(connect, { network: false })).toMatch(/refused/);
    const offline = toolsFor({ network: false });
    expect(await bash(connect, { tool: offline })).toMatch(/refused/);
    expect(await bash(connect, { tool: offline, network: true })).toBe('hello\n');
  });

  it('kills everything in the sandbox at the timeout, also what left the process group', async () => {
    const marker = `31.${process.pid}${Date.now() % 1000}`;
    const tool = toolsFor({ timeoutSeconds: 1 });
    const text = await bash(`setsid sleep ${marker} & (sleep ${marker} &); echo started; sleep ${marker}`, { tool });
    expect(text).toMatch(/^Error: command timed out after 1 s and was killed/);
    await vi.waitFor(() => expect(hostProcessesWith(`sleep ${marker}`)).toEqual([]), { timeout: 5_000, interval: 50 });
  });

  it('returns when the shell exits while a background child keeps running in the sandbox', async () => {
    const late = join(dataDir, 'users', 'alice', 'threads', 'thread-1', 'user-data', 'workspace', 'late.txt');
    const text = await bash('(sleep 1; echo late > late.txt) > /dev/null 2>&1 & echo started');
    expect(text).toBe('started\n');
    expect(existsSync(late)).toBe(false);
    await vi.waitFor(() => expect(readFileSync(late, 'utf8')).toBe('late\n'), { timeout: 10_000, interval: 50 });
  });

  it('can change what the file tools and uploads wrote, also in folders they created', async () => {
    const write = toolsFor({}, 'write_file');
    const configurable = { thread_id: 'thread-1', user_id: 'alice' };
    expect(await write.invoke({ description: 'd', path: 'new/dir/notes.txt', content: 'one\n' }, { configurable })).toBe('OK');
    expect(await bash('echo two >> new/dir/notes.txt && touch new/dir/more && cat new/dir/notes.txt')).toBe('one\ntwo\n');
  });
});
