/**
 * V8 settings for a small idle server, each measured (docs/benchmarks.md, "Idle memory"). PGlite's
 * WebAssembly runs on Liftoff code only: TurboFan's tier-up of it costs ~40 MiB resident and
 * bought no speed in PGlite's queries. The young generation keeps its first size instead of
 * growing to 16 MiB per semi-space (~30 MiB at rest after load). Both act on what is compiled and
 * allocated from then on, so `npm start` sets them before the server is loaded; the layers bench
 * starts its floors with them too, so they weigh on both sides of its ratios.
 */
export const SERVER_V8_FLAGS: readonly string[] = ['--liftoff-only', '--semi-space-growth-factor=1'];
