import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { settledWithin } from '../../time.js';

/**
 * Runs an adapter's admissions: those of one chat one after another (so its messages reach the
 * intake in the order the platform sent them, and no reply overtakes an earlier acknowledgement),
 * different chats side by side; `stop` waits for what is under way, within a bound.
 */
export class IngressRunner {
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly logger: Logger) {}

  /**
   * Runs `work` once earlier work for `chatKey` settled. Resolves with its result, or `undefined`
   * when it threw (logged): one failed message never stops its chat.
   */
  run<T>(chatKey: string, work: () => Promise<T>): Promise<T | undefined> {
    const next = (this.chains.get(chatKey) ?? Promise.resolve())
      .then(work)
      .catch((error: unknown) => {
        this.logger.error({ err: describeError(error) }, 'inbound message handling failed');
        return undefined;
      });
    this.chains.set(chatKey, next);
    this.inFlight.add(next);
    void next.finally(() => {
      this.inFlight.delete(next);
      if (this.chains.get(chatKey) === next) this.chains.delete(chatKey);
    });
    return next;
  }

  /** Resolves once the work under way now has settled (Telegram's next poll waits for it). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** Resolves once the work under way settled, or after `timeoutMs`, whichever comes first. */
  async stop(timeoutMs: number): Promise<void> {
    await settledWithin(Promise.allSettled([...this.inFlight]), timeoutMs);
  }
}
