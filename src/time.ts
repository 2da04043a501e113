/**
 * Waiting, in one place: `setTimeout`-based throughout, so test fake timers control all of it.
 */

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Waits for `work` to settle (either way) or for `ms` milliseconds, whichever comes first;
 * resolves true when `work` settled in time. Never rejects: for bounded waits at shutdown.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(settled, settled), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const settled = (): true => true;

/** `work`, or a rejection with `timeoutError()` (default `timed out after <ms> ms`) once `ms` passed; `work` itself goes on. */
export async function within<T>(work: Promise<T>, ms: number, timeoutError: () => Error = () => new Error(`timed out after ${ms} ms`)): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(timeoutError()), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
