/** Small, dependency-free statistics for benchmark reports. */

export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const rank = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[rank] as number;
}

export interface LatencySummary {
  count: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}

export function summarize(latenciesMs: readonly number[], wallMs: number): LatencySummary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    count: sorted.length,
    perSecond: (sorted.length / wallMs) * 1000,
    p50Ms: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
  };
}

export function formatRow(name: string, summary: LatencySummary): string {
  return `${name.padEnd(24)} ${summary.perSecond.toFixed(1).padStart(9)} ${summary.p50Ms.toFixed(1).padStart(9)} ${summary.p99Ms.toFixed(1).padStart(9)}`;
}

/** `name` padded to 24, then p50, p95 and p99 in ms, each right-aligned in 9 characters. */
export function formatPercentiles(name: string, summary: LatencySummary): string {
  const cells = [summary.p50Ms, summary.p95Ms, summary.p99Ms].map((ms) => ms.toFixed(1).padStart(9));
  return `${name.padEnd(24)} ${cells.join(' ')}`;
}

/** Resident set size of a process, in MiB, from /proc (Linux). */
export async function residentMiB(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}
