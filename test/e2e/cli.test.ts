import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScaledMs } from '../helpers/load-scaled-timer.js';
import { runCli, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

describe('npm run cli -- user …, outbox …, health', () => {
  let config: { path: string; dir: string };
  let server: ServerProcess | undefined;

  beforeAll(() => {
    config = writeConfig('server: { port: 0 }\nchannel_connections: { enabled: true }\n');
  });
  afterAll(async () => {
    await server?.stop();
  });

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
    // Ten processes, each loading the app and opening the database: minutes on a busy machine.
    // The bound is read when the file loads, so the load of the run so far stretches it.
  }, loadScaledMs(240_000));
});
