import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One result the fake serves; `content` is the snippet both wire formats carry. */
export interface FakeSearchHit {
  title: string;
  url: string;
  content?: string;
}

/** One recorded request, whichever route and whether or not it passed auth. */
export interface FakeSearchRequest {
  method: string;
  /** The path without the query string, e.g. `/search`. */
  path: string;
  /** The query string's parameters (SearXNG's `q` and `format`). */
  query: Record<string, string>;
  /** The parsed JSON body (Tavily), `undefined` for none; the raw text when it is not JSON. */
  body: unknown;
  headers: IncomingHttpHeaders;
}

/** Answers a search by its query text; when absent, `results` answers every query. */
export type FakeSearchResponder = (query: string) => FakeSearchHit[];

export interface FakeSearchProviderOptions {
  /** The bearer key `POST /search` (Tavily) accepts; anything else gets 401. Default `tvly-fake-key`. */
  apiKey?: string;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readText(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A search provider on 127.0.0.1 speaking both wire formats the server's search client uses:
 * Tavily (`POST /search`, bearer key, JSON body `{ query, max_results }`, honours `max_results`
 * as Tavily does) and SearXNG (`GET /search?q=…&format=json`, every hit, as SearXNG returns a
 * whole page; any other format gets 403, as an instance without JSON enabled answers).
 *
 * Hits come from `respond(query)` when set, else from `results`. Scripted faults: `fail` answers
 * the next request with that status, `malformed` the next one with that text (status 200), and
 * `hang` leaves every request unanswered until `stop()`.
 */
export class FakeSearchProvider {
  /** Every request, in arrival order, including refused ones. */
  readonly requests: FakeSearchRequest[] = [];
  readonly apiKey: string;
  /** The hits for any query, in order, when `respond` is not set. */
  results: FakeSearchHit[] = [];
  respond: FakeSearchResponder | undefined;
  /** Answer the next request with this status (and a provider-style error body); cleared once used. */
  fail: { status: number } | undefined;
  /** Answer the next request with this text as a 200 `application/json` body; cleared once used. */
  malformed: string | undefined;
  /** While true, requests get no answer at all (the connection stays open until `stop()`). */
  hang = false;

  private readonly server: Server;
  private port: number | undefined;

  constructor(options: FakeSearchProviderOptions = {}) {
    this.apiKey = options.apiKey ?? 'tvly-fake-key';
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { detail: { error: String(error) } });
        else res.destroy();
      });
    });
  }

  /** `http://127.0.0.1:<port>`, the provider's `base_url`. Throws before `start()`. */
  get baseURL(): string {
    if (this.port === undefined) throw new Error('FakeSearchProvider is not started');
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens on a free port; resolves to `baseURL`. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.baseURL;
  }

  /** Closes the server and every open connection, hanging requests included. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const body = parseBody(await readText(req));
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body,
      headers: req.headers,
    });
    if (this.hang) return;
    if (this.fail !== undefined) {
      const { status } = this.fail;
      this.fail = undefined;
      return sendJson(res, status, { detail: { error: `Scripted failure ${status}` } });
    }
    if (this.malformed !== undefined) {
      const text = this.malformed;
      this.malformed = undefined;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
      return;
    }
    if (url.pathname !== '/search') return sendJson(res, 404, { detail: { error: 'Not Found' } });
    if (req.method === 'POST') return this.tavily(req, res, body);
    if (req.method === 'GET') return this.searxng(res, url.searchParams);
    sendJson(res, 405, { detail: { error: 'Method Not Allowed' } });
  }

  private tavily(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) {
      sendJson(res, 401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
      return;
    }
    const { query, max_results: maxResults = 5 } = (body ?? {}) as { query?: unknown; max_results?: unknown };
    if (typeof query !== 'string' || query === '') {
      sendJson(res, 400, { detail: { error: 'Query is missing.' } });
      return;
    }
    const hits = this.hitsFor(query).slice(0, typeof maxResults === 'number' ? maxResults : 5);
    sendJson(res, 200, {
      query,
      answer: null,
      images: [],
      follow_up_questions: null,
      results: hits.map((hit, index) => ({ title: hit.title, url: hit.url, content: hit.content ?? '', score: 1 - index / 100, raw_content: null })),
      response_time: 0.01,
    });
  }

  private searxng(res: ServerResponse, params: URLSearchParams): void {
    if (params.get('format') !== 'json') {
      sendJson(res, 403, { detail: { error: 'Forbidden' } });
      return;
    }
    const query = params.get('q') ?? '';
    const hits = this.hitsFor(query);
    sendJson(res, 200, {
      query,
      number_of_results: hits.length,
      results: hits.map((hit, index) => ({
        title: hit.title,
        url: hit.url,
        content: hit.content ?? '',
        engine: 'fake',
        engines: ['fake'],
        positions: [index + 1],
        score: 1,
        category: 'general',
      })),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: [],
    });
  }

  private hitsFor(query: string): FakeSearchHit[] {
    return this.respond?.(query) ?? this.results;
  }
}
