import type { FakeTelegram } from '../fakes/telegram/index.js';

/** Appended to every benchmark answer, so a reply is a ~200-character text streamed in small deltas. */
export const ANSWER_PAD =
  ' — a short answer of about two hundred characters, streamed in small deltas the way a real model writes, so the server has partial updates to throttle and edit.';

/** The final text the fake model writes, and the baseline bot sends, for a user's `text`. */
export function answerTo(text: string): string {
  return `Answer to ${text}${ANSWER_PAD}`;
}

/**
 * Watches the fake for the call that shows each expected final text. One watcher for all
 * outstanding messages, reading only calls it has not seen.
 */
export class FinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly telegram: FakeTelegram) {}

  /**
   * Resolves with the ms from `sentAt` to the `sendMessage` or `editMessageText` call (its arrival
   * at the fake) that showed `finalText`. Never rejects; it waits up to an hour.
   */
  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.telegram.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.telegram.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      if (!call || (call.method !== 'sendMessage' && call.method !== 'editMessageText')) continue;
      const entry = this.pending.get(String(call.params.text));
      if (!entry) continue;
      this.pending.delete(String(call.params.text));
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}
