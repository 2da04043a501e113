/**
 * Counts the statements a process sends to PGlite, for the layers bench (issue #14: each one
 * costs ~1.5 ms of CPU on the Node thread, so statements per message are the main lever).
 *
 * Loaded only by the bench, as a preload of the process it measures (`--import` this file), so
 * nothing in the server knows of it. It wraps `query`, `exec` and the transaction handle's
 * methods on PGlite's prototype (drizzle sends every statement through one of them, BEGIN and
 * COMMIT included). `SIGUSR2` makes the process print one line, `pglite-statements <json>`, with
 * the counts since start per statement text; `statementCounts` is the same for an in-process
 * caller (the layer worker).
 */
import { PGlite } from '@electric-sql/pglite';

const counts = new Map<string, number>();

/** Statement text → times sent, since the process started. */
export function statementCounts(): Record<string, number> {
  return Object.fromEntries(counts);
}

/** One line per statement kind; parameters differ, the text does not. */
function count(text: unknown): void {
  const key = typeof text === 'string' ? text.replace(/\s+/g, ' ').trim() : String(text);
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

type Method = (this: PGlite, text: string, ...rest: unknown[]) => Promise<unknown>;
interface TransactionHandle {
  query: (text: string, ...rest: unknown[]) => Promise<unknown>;
  exec: (text: string, ...rest: unknown[]) => Promise<unknown>;
}

const prototype = PGlite.prototype as unknown as Record<'query' | 'exec', Method> & {
  transaction: (this: PGlite, callback: (tx: TransactionHandle) => Promise<unknown>) => Promise<unknown>;
};
for (const name of ['query', 'exec'] as const) {
  const original = prototype[name];
  prototype[name] = function (this: PGlite, text, ...rest) {
    count(text);
    return original.call(this, text, ...rest);
  };
}
const transaction = prototype.transaction;
prototype.transaction = function (this: PGlite, callback) {
  count('BEGIN');
  return transaction.call(this, (tx) => {
    const query = tx.query.bind(tx);
    const exec = tx.exec.bind(tx);
    tx.query = (text, ...rest) => {
      count(text);
      return query(text, ...rest);
    };
    tx.exec = (text, ...rest) => {
      count(text);
      return exec(text, ...rest);
    };
    return callback(tx).finally(() => count('COMMIT or ROLLBACK'));
  });
};

process.on('SIGUSR2', () => {
  process.stdout.write(`pglite-statements ${JSON.stringify(statementCounts())}\n`);
});
