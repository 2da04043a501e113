import type { RequestWindow } from '../../src/channel/types.js';

/**
 * The app's budget per open API method (Feishu: "1000 次/分钟、50 次/秒" per API, per app and
 * tenant, for message sends, replies, patches and each CardKit endpoint; hitting either one
 * throttles): one request window per limit, keyed by the method's name. The windows come from
 * core (`deps.requestWindow`), so scaled-out processes share one budget.
 */
export class AppBudget {
  constructor(private readonly windows: readonly RequestWindow[]) {}

  /** Runs one `method` call once it fits every window. */
  run<T>(method: string, request: () => Promise<T>): Promise<T> {
    return this.windows.reduceRight<() => Promise<T>>((inner, window) => () => window.run(method, inner), request)();
  }
}
