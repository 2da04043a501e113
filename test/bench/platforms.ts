import { formatRow, type LatencySummary } from './stats.js';
import type { PlatformFigures } from './telegram.js';

/**
 * The chat platforms side by side, from one run: the same chats × messages and the same fake
 * model through the whole server, each platform against its own fake. Ratios are to Telegram
 * (rate above 1 = faster; latency above 1 = slower).
 */
export function printPlatformComparison(figures: ReadonlyMap<string, PlatformFigures>): void {
  const telegram = figures.get('telegram');
  if (!telegram || figures.size < 2) return;
  const ratio = (name: string, a: LatencySummary, b: LatencySummary) =>
    `${`  ${name} / telegram`.padEnd(24)} ${(a.perSecond / b.perSecond).toFixed(2).padStart(9)} ${(a.p50Ms / b.p50Ms).toFixed(2).padStart(9)} ${(a.p99Ms / b.p99Ms).toFixed(2).padStart(9)}`;
  console.log('\nplatforms through the whole server, same load and model (ratios to telegram)');
  console.log(`${''.padEnd(24)} ${'msgs/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  for (const phase of ['alone', 'concurrent'] as const) {
    console.log(phase === 'alone' ? 'one chat, messages in a row' : 'all chats at once');
    for (const [name, platform] of figures) console.log(formatRow(`  ${name}`, platform[phase]));
    for (const [name, platform] of figures) if (name !== 'telegram') console.log(ratio(name, platform[phase], telegram[phase]));
  }
}

/** One platform's run next to its bare SDK bot: `chat` names a chat as the platform does (`chat`, `DM`). */
export function printOursVsBare(input: {
  baseline: string;
  chat: string;
  messagesPerChat: number;
  chats: number;
  ours: PlatformFigures;
  bare: PlatformFigures;
}): void {
  const ratio = (a: LatencySummary, b: LatencySummary) =>
    `${'ratio (ours / bare)'.padEnd(24)} ${(a.perSecond / b.perSecond).toFixed(2).padStart(9)} ${(a.p50Ms / b.p50Ms).toFixed(2).padStart(9)} ${(a.p99Ms / b.p99Ms).toFixed(2).padStart(9)}`;
  console.log(`${''.padEnd(24)} ${'msgs/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  console.log(`one ${input.chat}, ${input.messagesPerChat} messages in a row (latency without queueing)`);
  console.log(formatRow('  deerflow-channels', input.ours.alone));
  console.log(formatRow(`  ${input.baseline}`, input.bare.alone));
  console.log(ratio(input.ours.alone, input.bare.alone));
  console.log(`${input.chats} ${input.chat}s at once (throughput; latency includes waiting for a worker)`);
  console.log(formatRow('  deerflow-channels', input.ours.concurrent));
  console.log(formatRow(`  ${input.baseline}`, input.bare.concurrent));
  console.log(ratio(input.ours.concurrent, input.bare.concurrent));
}
