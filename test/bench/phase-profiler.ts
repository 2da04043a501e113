/**
 * A CPU profile of one phase of a process the bench measures from outside (the server, L4):
 * loaded only by the bench, as a preload (`--import` this file), so nothing in the server knows
 * of it. The first `SIGUSR2` starts V8's sampling profiler through the inspector, the second
 * stops it and writes the profile to the path in `DFC_BENCH_CPU_PROFILE` (`.cpuprofile`, read by
 * profile-breakdown.ts). `--cpu-prof` would cover the process's whole life, start-up and warm-up
 * included; this covers what the bench times and nothing else, as a layer worker's profile does.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const path = process.env.DFC_BENCH_CPU_PROFILE;
let session: Session | undefined;

async function toggle(): Promise<void> {
  if (path === undefined) return;
  if (session === undefined) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    return;
  }
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(path, JSON.stringify(profile));
  session.disconnect();
  process.stdout.write('phase-profiler written\n');
}

process.on('SIGUSR2', () => {
  void toggle();
});
