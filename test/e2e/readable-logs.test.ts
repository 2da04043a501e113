import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackChild, withRunMarker } from '../helpers/child-processes.js';
import { startLoadScaledTimer } from '../helpers/load-scaled-timer.js';
import { SERVER_BUNDLE, writeConfig } from './server-process.js';

/**
 * What an operator reads on the console: with `log.format: pretty` (what a terminal gets by
 * default), one line per event instead of JSON, and no request lines for the health probes.
 */

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** The bundle as `npm start` runs it, with its stdout as it grows. */
function startServer(configPath: string): { output: () => string; waitFor: (text: string | RegExp) => Promise<string> } {
  const child = trackChild(
    spawn(process.execPath, [SERVER_BUNDLE, '--config', configPath], {
      cwd: mkdtempSync(join(tmpdir(), 'dfc-logs-')),
      env: withRunMarker({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  children.push(child);
  let stdout = '';
  const listeners = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const listener of [...listeners]) listener();
  });
  const waitFor = (text: string | RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = typeof text === 'string' ? stdout.includes(text) : text.test(stdout);
        if (!found) return;
        listeners.delete(check);
        timer.cancel();
        resolve(stdout);
      };
      const timer = startLoadScaledTimer(120_000, (waitedMs) => {
        listeners.delete(check);
        reject(new Error(`no ${String(text)} in the output within ${waitedMs} ms:\n${stdout}`));
      });
      listeners.add(check);
      check();
    });
  return { output: () => stdout, waitFor };
}

describe('logs a person can read', () => {
  it('writes one plain line per event with log.format: pretty, and leaves the health probes out', async () => {
    const server = startServer(writeConfig('server: { port: 0 }\nlog: { format: pretty }\n').path);
    const started = await server.waitFor(/server listening[\s\S]*?http:\/\/127\.0\.0\.1:\d+/);
    const url = (/(http:\/\/127\.0\.0\.1:\d+)/.exec(started.slice(started.indexOf('server listening'))) as RegExpExecArray)[1];
    for (let i = 0; i < 3; i++) expect((await fetch(`${url}/health`)).status).toBe(200);
    // A request that is logged: once its line is out, any line for the probes would be too.
    expect((await fetch(`${url}/api/models`)).status).toBe(200);
    const output = await server.waitFor('/api/models');
    expect(output).toMatch(/INFO.*server listening/);
    for (const line of output.split('\n').filter((text) => text.trim() !== '')) expect(line.trimStart().startsWith('{')).toBe(false);
    expect(output).not.toContain('/health');
  });
});
