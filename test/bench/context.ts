/**
 * Long conversations (issue #16): one chat of `turns` turns through the embedded runtime, whose
 * history grows by ~300 tokens a turn, twice: with the model's `context_window` set (older turns
 * folded into a summary as the history nears it) and without (every request carries the whole
 * history: the baseline). Each run is a fresh `layer-worker.ts` process (the `runtime` layer).
 * Printed: the server's CPU per turn at the start and the end of the chat, the model calls the
 * summaries add, and the size of the last request.
 */

import { SERVER_V8_FLAGS } from '../../src/v8-flags.js';
import { type FakeChatRequest, FakeOpenAI, requestTokens } from '../fakes/openai/index.js';
import { isSummaryRequest } from '../helpers/summaries.js';
import { createBenchDatabase } from './cpu-time.js';
import type { LayerResult, LayerSpec } from './layer-worker.js';
import { runLayerWorker } from './layers.js';

export interface ContextBenchOptions {
  turns: number;
  /** PostgreSQL server URL; absent → PGlite. */
  databaseUrl?: string | undefined;
}

/** A window small enough that a 200-turn chat is folded about twenty times. */
const CONTEXT_WINDOW = 16_384;
/** Turns averaged (median) at each end of the chat. */
const END_TURNS = 10;
/** ~300 tokens: each answer grows the history by this much. */
const ANSWER = 'The quick brown fox jumps over the lazy dog while the band plays on. '.repeat(17);
const SUMMARY = 'The person asked a long series of short questions, each answered at length. ';

interface ContextRun {
  result: LayerResult;
  summaryCalls: number;
  lastRequestTokens: number;
}

export async function runContextBench(options: ContextBenchOptions): Promise<void> {
  const database = options.databaseUrl === undefined ? undefined : await createBenchDatabase(options.databaseUrl);
  const model = new FakeOpenAI();
  model.respond = (request) => ({ text: isSummaryRequest(request) ? SUMMARY : ANSWER });
  await model.start();
  try {
    console.log(
      `\nlong conversation: one chat of ${options.turns} turns through the embedded runtime on ${database ? 'PostgreSQL' : 'PGlite'}, ~300 tokens more history a turn; context_window ${CONTEXT_WINDOW} against none (the whole history every time)`,
    );
    const run = async (contextWindow: number | undefined): Promise<ContextRun> => {
      const before = model.requests.length;
      const spec: LayerSpec = {
        layer: 'runtime',
        database: database ? { kind: 'postgres', url: database.url, name: database.name } : { kind: 'pglite' },
        modelBaseUrl: model.baseURL,
        // The worker's other phases: this bench reads only the long chat, and they warm the process up for it.
        chats: 5,
        messagesPerChat: 10,
        concurrency: 5,
        longTurns: options.turns,
        ...(contextWindow === undefined ? {} : { contextWindow }),
      };
      const result = await runLayerWorker(spec, [...SERVER_V8_FLAGS]);
      const requests = model.requests.slice(before);
      const summaries = requests.filter(isSummaryRequest);
      const chats = requests.filter((request) => !isSummaryRequest(request));
      return { result, summaryCalls: summaries.length, lastRequestTokens: requestTokens(chats.at(-1) as FakeChatRequest) };
    };
    const whole = await run(undefined);
    const summarised = await run(CONTEXT_WINDOW);
    print([
      ['whole history (baseline)', whole],
      [`summarised (window ${CONTEXT_WINDOW})`, summarised],
    ]);
    const lastCpu = (run: ContextRun) => median((run.result.long?.cpuMs ?? []).slice(-END_TURNS));
    console.log(
      `at the end, summarised / baseline: CPU per turn ${(lastCpu(summarised) / lastCpu(whole)).toFixed(2)}×, request size ${(summarised.lastRequestTokens / whole.lastRequestTokens).toFixed(2)}×; model calls per turn ${((options.turns + summarised.summaryCalls) / options.turns).toFixed(3)} against 1`,
    );
  } finally {
    await model.stop();
    await database?.drop();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function print(rows: [string, ContextRun][]): void {
  console.log(`turns 1–${END_TURNS} against the last ${END_TURNS} (median CPU ms per turn of the runtime's process)`);
  console.log('run                              | CPU first | CPU last | last/first | summary calls | calls per turn | last request tokens');
  for (const [name, run] of rows) {
    const cpuMs = run.result.long?.cpuMs ?? [];
    const first = median(cpuMs.slice(0, END_TURNS));
    const last = median(cpuMs.slice(-END_TURNS));
    const turns = cpuMs.length;
    console.log(
      `${name.padEnd(32)} | ${first.toFixed(1).padStart(9)} | ${last.toFixed(1).padStart(8)} | ${(last / first).toFixed(2).padStart(10)} | ${String(run.summaryCalls).padStart(13)} | ${((turns + run.summaryCalls) / turns).toFixed(3).padStart(14)} | ${String(run.lastRequestTokens).padStart(19)}`,
    );
  }
}
