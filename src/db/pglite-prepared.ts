import { type ParserOptions, type PGlite, parse, protocol, type QueryOptions, type Results, type Transaction } from '@electric-sql/pglite';

/** Statements kept prepared per database; past it the least recently used one is closed. */
const STATEMENT_CACHE_SIZE = 256;

/** Only these are worth preparing; DDL, `savepoint` and the like run once and go the plain way. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * A prepared statement's plan no longer fits the tables (26000: it is gone; 0A000: "cached plan
 * must not change result type" after DDL): prepare it again.
 */
const STALE_STATEMENT_CODES = new Set(['26000', '0A000']);

const { serialize } = protocol;

type BackendMessage = Awaited<ReturnType<PGlite['execProtocol']>>['messages'][number];

interface PreparedStatement {
  name: string;
  parameterTypes: number[];
  /** What the statement returns, from its Describe; absent for one that returns no rows. */
  rowDescription: BackendMessage | undefined;
  /** The type of each column it returns, in order. */
  columnTypes: number[];
}

/** The part of PGlite's client drizzle's `pglite` driver calls. */
type PgliteQueryClient = Pick<PGlite, 'query' | 'transaction'>;

/**
 * PGlite with a statement cache, handed to drizzle in place of the client.
 *
 * PGlite's `query` parses and plans every statement afresh and crosses into WebAssembly six
 * times for it (parse, describe, bind, describe, execute, sync): about 0.4–0.7 ms of CPU for a
 * one-row insert. The server sends the same few dozen statement texts all day, so each text is
 * parsed once as a named statement, and every later call is one Bind + Execute + Sync round trip
 * on the plan Postgres keeps: about 0.1 ms (issue #14; `docs/benchmarks.md`). What PGlite's own
 * `query` does around that is kept: its locks (no statement runs inside another caller's
 * transaction), its value serializers and result parsers, and its errors.
 */
export class PreparedStatementClient implements PgliteQueryClient {
  private readonly statements = new Map<string, PreparedStatement>();
  private nextStatementId = 0;

  constructor(readonly pglite: PGlite) {}

  query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    if (!PREPARABLE.test(text)) return this.pglite.query<T>(text, params, options);
    return this.pglite._runExclusiveTransaction(() => this.pglite.runExclusive(() => this.run<T>(text, params, options, { inTransaction: false })));
  }

  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.pglite.transaction((tx) =>
      callback({
        query: <R>(text: string, params: unknown[] = [], options?: QueryOptions) =>
          tx.closed || !PREPARABLE.test(text)
            ? tx.query<R>(text, params, options)
            : this.pglite.runExclusive(() => this.run<R>(text, params, options, { inTransaction: true })),
        sql: tx.sql,
        exec: tx.exec,
        rollback: tx.rollback,
        listen: tx.listen,
        get closed() {
          return tx.closed;
        },
      }),
    );
  }

  /** Runs `text` on its prepared statement; the caller holds PGlite's locks. */
  private async run<T>(text: string, params: unknown[], options: QueryOptions | undefined, at: { inTransaction: boolean }): Promise<Results<T>> {
    // As PGlite's `query` says it; the protocol calls below would fail on the missing module.
    if (this.pglite.closed) throw new Error('PGlite is closed');
    const cached = this.statements.get(text);
    const statement = cached ?? (await this.prepare(text));
    try {
      const { messages } = await this.pglite.execProtocol(
        concat([serialize.bind({ statement: statement.name, values: this.serializeParams(params, statement.parameterTypes, options) }), serialize.execute({}), serialize.sync()]),
        { syncToFs: !at.inTransaction },
      );
      // Most recently used last: the Map's first key is the one to close when it is full.
      this.statements.delete(text);
      this.statements.set(text, statement);
      const described = statement.rowDescription === undefined ? messages : [statement.rowDescription, ...messages];
      // PGlite's `parseResults` would copy its whole parser table (~300 types) into one with the
      // caller's parsers for every statement (drizzle passes some with each): 0.1–0.2 ms a
      // statement. Handing it only the result's own column types is the same lookup, without it.
      const parsers = columnParsers(statement.columnTypes, this.pglite.parsers, options?.parsers);
      return parse.parseResults(described, parsers, options?.rowMode === undefined ? undefined : { rowMode: options.rowMode })[0] as Results<T>;
    } catch (error) {
      // Only a plan made before is stale; a statement just prepared that says so means it.
      if (cached === undefined || !STALE_STATEMENT_CODES.has((error as { code?: string }).code ?? '')) throw error;
      this.statements.delete(text);
      // Inside a transaction the error has aborted it; only the caller can start again.
      if (at.inTransaction) throw error;
      return this.run<T>(text, params, options, at);
    }
  }

  private async prepare(text: string): Promise<PreparedStatement> {
    const name = `dfc_${++this.nextStatementId}`;
    const evicted = this.statements.size >= STATEMENT_CACHE_SIZE ? this.statements.entries().next().value : undefined;
    if (evicted) this.statements.delete(evicted[0]);
    const { messages } = await this.pglite.execProtocol(
      concat([
        ...(evicted ? [serialize.close({ type: 'S', name: evicted[1].name })] : []),
        serialize.parse({ name, text }),
        serialize.describe({ type: 'S', name }),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const parameters = messages.find((message) => message.name === 'parameterDescription') as { dataTypeIDs: number[] } | undefined;
    const rowDescription = messages.find((message) => message.name === 'rowDescription') as
      | (BackendMessage & { fields: { dataTypeID: number }[] })
      | undefined;
    const statement = {
      name,
      parameterTypes: parameters?.dataTypeIDs ?? [],
      rowDescription,
      columnTypes: rowDescription?.fields.map((field) => field.dataTypeID) ?? [],
    };
    this.statements.set(text, statement);
    return statement;
  }

  /** As PGlite's `query` does: each value through the serializer of its parameter's type, else its text. */
  private serializeParams(params: unknown[], types: number[], options: QueryOptions | undefined): (string | null)[] {
    return params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = types[i] as number;
      const serializer = options?.serializers?.[type] ?? this.pglite.serializers[type];
      return serializer ? serializer(value) : String(value);
    });
  }
}

/**
 * The parser of each of `types`, the caller's before PGlite's own: what PGlite's `parseResults`
 * would look up in the merge of the two tables. A type neither has falls back to PGlite's
 * built-in parsers there, as before.
 */
function columnParsers(types: readonly number[], own: ParserOptions, callers: ParserOptions | undefined): Record<number, ParserOptions[number]> {
  const parsers: Record<number, ParserOptions[number]> = {};
  for (const type of types) {
    const parser = callers?.[type] ?? own[type];
    if (parser !== undefined) parsers[type] = parser;
  }
  return parsers;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
