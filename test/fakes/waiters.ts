import { type LoadScaledTimer, startLoadScaledTimer } from '../helpers/load-scaled-timer.js';

/**
 * What a fake platform's `waitFor` needs: conditions re-checked whenever the fake says something
 * changed (`notify`, after each call or frame), so tests wait for what a user would see without
 * sleeping.
 */
export class Waiters {
  private readonly listeners = new Set<() => void>();

  /**
   * @param owner names the fake in timeout errors, e.g. `FakeSlack`.
   * @param options.pollMs also re-checks this often, for conditions on things the fake does not
   *   see change (its clock, state outside it).
   */
  constructor(
    private readonly owner: string,
    private readonly options: { pollMs?: number } = {},
  ) {}

  /**
   * Resolves with the predicate's first truthy value, checked now and on every `notify`; rejects
   * when the predicate throws, or after `timeoutMs` stretched by the machine's load (see
   * `startLoadScaledTimer`): the bound only ends a wait that would hang, and a busy machine
   * makes it longer instead of failing the test.
   */
  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs = 5000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: LoadScaledTimer | undefined;
      let poll: ReturnType<typeof setInterval> | undefined;
      const check = (): void => {
        let value: T | false | null | undefined;
        try {
          value = predicate();
        } catch (error) {
          done();
          reject(error);
          return;
        }
        if (value) {
          done();
          resolve(value);
        }
      };
      const done = (): void => {
        timer?.cancel();
        clearInterval(poll);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      if (this.options.pollMs !== undefined) poll = setInterval(check, this.options.pollMs);
      timer = startLoadScaledTimer(timeoutMs, (waitedMs) => {
        done();
        reject(new Error(`${this.owner}.waitFor: condition not met within ${waitedMs} ms`));
      });
      check();
    });
  }

  /** Re-checks every waiting condition. */
  notify(): void {
    for (const check of [...this.listeners]) check();
  }
}
