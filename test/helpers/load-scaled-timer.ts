/**
 * Bounds for waits in tests that stretch with the machine's load, so a busy machine (the suite's
 * own workers and their servers, or anything else running) makes a wait longer instead of
 * making it fail. The bounds exist only to end a run that hangs; tests wait on readiness signals.
 */
import { availableParallelism, loadavg } from 'node:os';

/**
 * How many times longer than on an idle machine things may take now: 1 + the 1-minute load
 * average per core (2 on a 2-core machine with two busy processes). At least 1.
 */
export function loadFactor(): number {
  const [oneMinute = 0] = loadavg();
  return 1 + Math.max(0, oneMinute) / availableParallelism();
}

/** `baseMs` stretched by the load right now ({@link loadFactor}), rounded up to whole milliseconds. */
export function loadScaledMs(baseMs: number): number {
  return Math.ceil(baseMs * loadFactor());
}

export interface LoadScaledTimer {
  /** Stops the timer; `onExpired` is not called after this. */
  cancel(): void;
}

/**
 * Calls `onExpired` once `baseMs` stretched by the load has passed. The load is read again when
 * the timer would fire, and the wait goes on while the stretched bound is still ahead: the
 * 1-minute average lags, so load that arrives during a wait still stretches it.
 *
 * @param onExpired receives the milliseconds waited, for the error message.
 */
export function startLoadScaledTimer(baseMs: number, onExpired: (waitedMs: number) => void): LoadScaledTimer {
  const startedAt = performance.now();
  let timer: ReturnType<typeof setTimeout>;
  const arm = (): void => {
    const remainingMs = loadScaledMs(baseMs) - (performance.now() - startedAt);
    if (remainingMs <= 0) {
      onExpired(Math.round(performance.now() - startedAt));
      return;
    }
    timer = setTimeout(arm, remainingMs);
  };
  // Never synchronously, so callers can finish setting up before `onExpired` may run.
  timer = setTimeout(arm, loadScaledMs(baseMs));
  return { cancel: () => clearTimeout(timer) };
}
