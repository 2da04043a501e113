import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScaledMs } from '../helpers/load-scaled-timer.js';
import { runCli, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

describe('npm run cli -- user …, outbox …, health', () => {
  let config: { path: string; dir: string };
  let server: ServerProcess | undefined;

  beforeAll(() => {
    config = writeConfig('server: { port: 0 }\nauth: { admin_token: cli-operator-token }\nchannel_connections: { enabled: true }\n');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('disables, enables, re-keys and deletes users on the database; delete wants --yes; user --help lists every user command', async () => {
    const run = (...args: string[]) => runCli(['--config', config.path, ...args], config.dir);
    const created = await run('user', 'create', 'yan');
    const id = /created user yan \(([0-9a-f-]{36})\)/.exec(created.stdout)?.[1] as string;
    expect(await run('user', 'disable', 'yan')).toMatchObject({ code: 0, stdout: `yan (${id}): disabled\n` });
    expect((await run('user', 'list')).stdout).toMatch(/\tyan\tshell: no\tdisabled\t/);
    expect(await run('user', 'enable', id)).toMatchObject({ code: 0, stdout: `yan (${id}): enabled\n` });
    expect((await run('user', 'list')).stdout).toMatch(/\tyan\tshell: no\tactive\t/);
    const rotated = await run('user', 'rotate-key', 'yan');
    expect(rotated).toMatchObject({ code: 0, stdout: expect.stringMatching(/^new api key for yan \([0-9a-f-]{36}\); the old one no longer works\napi key \(shown once, store it now\): dfc_\S+\n$/) });
    expect(await run('user', 'disable', 'nobody-here')).toMatchObject({ code: 1, stderr: 'deerflow-channels: User not found\n' });

    // Without --yes nothing is deleted, and it says how to.
    const refused = await run('user', 'delete', 'yan');
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('add --yes to delete') });
    expect((await run('user', 'list')).stdout).toContain('\tyan\t');
    expect(await run('user', 'delete', 'yan', '--yes')).toMatchObject({ code: 0, stdout: `deleted user yan (${id})\n` });
    expect((await run('user', 'list')).stdout).not.toContain('\tyan\t');
    expect(await run('user', 'delete', 'yan', '--yes')).toMatchObject({ code: 1, stderr: 'deerflow-channels: User not found\n' });

    const userHelp = await runCli(['user', '--help'], config.dir);
    expect(userHelp.code).toBe(0);
    for (const verb of ['create', 'list', 'grant-shell', 'revoke-shell', 'disable', 'enable', 'rotate-key', 'delete']) {
      expect(userHelp.stdout).toMatch(new RegExp(`^  user ${verb} .*\\S`, 'm'));
    }
    expect(userHelp.stdout).not.toContain('outbox');
    const help = await runCli(['--help'], config.dir);
    expect(help.stdout).toContain('user delete <name|id> --yes');
    expect(help.stdout).toContain('user rotate-key <name|id>');
  }, loadScaledMs(240_000));

  it('creates a user whose key the server then accepts, lists users, grants and revokes the shell, refuses duplicates and bad usage', async () => {
    const created = await runCli(['--config', config.path, 'user', 'create', 'zoe'], config.dir);
    expect(created.code).toBe(0);
    const key = /api key \(shown once, store it now\): (dfc_\S+)/.exec(created.stdout)?.[1];
    expect(key).toBeDefined();

    const listed = await runCli(['--config', config.path, 'user', 'list'], config.dir);
    expect(listed.stdout).toMatch(/\tzoe\tshell: no\t/);
    expect(listed.stdout).not.toContain(key);

    // The shell grant, by name or id; the listing shows it.
    const granted = await runCli(['--config', config.path, 'user', 'grant-shell', 'zoe'], config.dir);
    expect(granted).toMatchObject({ code: 0, stdout: expect.stringMatching(/^zoe \([0-9a-f-]{36}\): shell granted\n$/) });
    expect((await runCli(['--config', config.path, 'user', 'list'], config.dir)).stdout).toMatch(/\tzoe\tshell: granted\t/);
    const id = /\(([0-9a-f-]{36})\)/.exec(granted.stdout)?.[1] as string;
    expect((await runCli(['--config', config.path, 'user', 'revoke-shell', id], config.dir)).stdout).toBe(`zoe (${id}): shell revoked\n`);
    expect(await runCli(['--config', config.path, 'user', 'grant-shell', 'nobody-here'], config.dir)).toMatchObject({
      code: 1,
      stderr: 'deerflow-channels: User not found\n',
    });
    expect((await runCli(['--config', config.path, 'user', 'grant-shell'], config.dir)).code).toBe(2);

    const duplicate = await runCli(['--config', config.path, 'user', 'create', 'zoe'], config.dir);
    expect(duplicate).toMatchObject({ code: 1, stderr: 'deerflow-channels: A user with this name already exists.\n' });
    expect((await runCli(['user', 'frobnicate'], config.dir)).code).toBe(2);
    // --help prints the usage to stdout and succeeds, before any config or database is read.
    const help = await runCli(['--help'], config.dir);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('user create <name>') });
    expect(help.stdout).toContain('outbox retry <id|all>');
    // Outbox commands ask the running server; without one they say so.
    const noServer = await runCli(['--config', config.path, '--url', 'http://127.0.0.1:9', 'outbox', 'list'], config.dir);
    expect(noServer).toMatchObject({ code: 1, stderr: expect.stringContaining('no server answers at http://127.0.0.1:9') });
    expect((await runCli(['--config', config.path, 'outbox', 'retry'], config.dir)).code).toBe(2);
    expect(await runCli(['--config', config.path, '--url', 'http://127.0.0.1:9', 'health'], config.dir)).toMatchObject({ code: 1, stderr: expect.stringContaining('no server answers') });
    expect((await runCli(['--config', config.path, 'health', 'now'], config.dir)).code).toBe(2);

    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    const me = await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(await me.json()).toMatchObject({ user: { name: 'zoe', can_use_shell: false }, is_operator: false });
    // What the container image's HEALTHCHECK runs: 0 and the report while the server answers 200.
    const health = await runCli(['--config', config.path, '--url', server.url, 'health'], config.dir);
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ ok: true, database: { ok: true } });

    // While the embedded server holds the data dir, the same commands go through its API.
    const run = (...args: string[]) => runCli(['--config', config.path, '--url', (server as ServerProcess).url, ...args], config.dir);
    expect((await run('user', 'disable', 'zoe')).code).toBe(0);
    expect(await (await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${key}` } })).json()).toEqual({
      code: 'USER_DISABLED',
      message: 'This account is disabled. Ask the operator.',
    });
    expect((await run('user', 'list')).stdout).toMatch(/\tzoe\tshell: no\tdisabled\t/);
    expect((await run('user', 'enable', 'zoe')).code).toBe(0);
    const rotated = await run('user', 'rotate-key', 'zoe');
    const newKey = /api key \(shown once, store it now\): (dfc_\S+)/.exec(rotated.stdout)?.[1];
    expect((await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect((await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${newKey}` } })).status).toBe(200);
    expect((await run('user', 'delete', 'zoe')).code).toBe(2);
    expect(await run('user', 'delete', 'zoe', '--yes')).toMatchObject({ code: 0, stdout: expect.stringMatching(/^deleted user zoe /) });
    expect((await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${newKey}` } })).status).toBe(401);
    // Ten processes, each loading the app and opening the database: minutes on a busy machine.
    // The bound is read when the file loads, so the load of the run so far stretches it.
  }, loadScaledMs(240_000));
});
