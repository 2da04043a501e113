/**
 * Counts the statements a process sends to PGlite, for the layers bench (issue #14: each one cost
 * ~1.5 ms of CPU on the Node thread before the statement cache, ~0.3 ms with it).
 *
 * Loaded only by the bench, as a preload of the process it measures (`--import` this file), so
 * nothing in the server knows of it. It wraps `query`, `exec` and the transaction handle's
 * methods on PGlite's prototype, and `execProtocol`, where the server's statement cache
 * (`src/db/pglite-prepared.ts`) sends a prepared statement's Bind: each Bind counts as its
 * statement's text, learnt from the Parse that named it. `SIGUSR2` makes the process print one
 * line, `pglite-statements <json>`, with the counts since start per statement text;
 * `statementCounts` is the same for an in-process caller (the layer worker).
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

/** Prepared statement name → its text, from the Parse messages sent. */
const preparedTexts = new Map<string, string>();
const decoder = new TextDecoder();

/** Counts each Bind in a frontend message buffer as its statement; remembers each Parse's name. */
function countProtocol(buffer: Uint8Array): void {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const cstring = (at: number): [string, number] => {
    const end = buffer.indexOf(0, at);
    return [decoder.decode(buffer.subarray(at, end)), end + 1];
  };
  for (let at = 0; at + 5 <= buffer.length; at += 1 + view.getInt32(at + 1)) {
    const type = String.fromCharCode(buffer[at] as number);
    if (type === 'P') {
      const [name, next] = cstring(at + 5);
      preparedTexts.set(name, cstring(next)[0]);
    } else if (type === 'B') {
      const [, next] = cstring(at + 5);
      count(preparedTexts.get(cstring(next)[0]) ?? 'unnamed Bind');
    }
  }
}

const execProtocol = (PGlite.prototype as unknown as { execProtocol: (this: PGlite, message: Uint8Array, ...rest: unknown[]) => Promise<unknown> })
  .execProtocol;
(PGlite.prototype as unknown as { execProtocol: typeof execProtocol }).execProtocol = function (this: PGlite, message, ...rest) {
  countProtocol(message);
  return execProtocol.call(this, message, ...rest);
};

process.on('SIGUSR2', () => {
  process.stdout.write(`pglite-statements ${JSON.stringify(statementCounts())}\n`);
});
