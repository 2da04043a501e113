import { fetch, type RequestInit } from 'undici';
import { ConfigError } from '../../errors.js';
import { SearchError } from './errors.js';

/** One web search hit, as the model gets it. */
export interface SearchResult {
  title: string;
  /** An http(s) URL; results with anything else are dropped. */
  url: string;
  /** The provider's excerpt of the page, whitespace collapsed, at most 500 characters. */
  snippet: string;
}

/** A web search service. */
export interface SearchProvider {
  /** `tavily` or `searxng`, for logs. */
  readonly name: string;
  /**
   * The provider's results for `query`, in its order, at most `maxResults`.
   * @throws SearchError when the provider refuses, fails, times out or answers with something else.
   */
  search(query: string, options: { maxResults: number; signal?: AbortSignal }): Promise<SearchResult[]>;
}

/** `web.search` of the config (`src/agent/web/config.ts`), the parts a provider needs. */
export interface SearchProviderConfig {
  provider: 'tavily' | 'searxng';
  /** Absent: https://api.tavily.com for Tavily; SearXNG needs it. */
  base_url?: string;
  /** Tavily's key; SearXNG takes none. */
  api_key?: string;
  timeout_seconds: number;
}


const TAVILY_BASE_URL = 'https://api.tavily.com';
const MAX_SNIPPET_CHARS = 500;
/** Characters of a result title kept; titles are labels, and a page may stuff anything into its title. */
const MAX_TITLE_CHARS = 300;

/**
 * The search provider `config` names: Tavily (`POST /search` with a bearer key) or a SearXNG
 * instance (`GET /search?format=json`). Each search is bounded by `timeout_seconds` and by the
 * caller's signal; results without an http(s) URL are dropped.
 *
 * @throws ConfigError when Tavily has no `api_key` or SearXNG no `base_url` (the config schema
 *   refuses both already; this guards callers that build the config themselves).
 */
export function createSearchProvider(config: SearchProviderConfig): SearchProvider {
  const timeoutMs = config.timeout_seconds * 1000;
  if (config.provider === 'tavily') {
    const apiKey = config.api_key;
    if (apiKey === undefined || apiKey === '') throw new ConfigError(['web.search.api_key: Tavily needs api_key (e.g. $TAVILY_API_KEY)']);
    const endpoint = endpointUrl(config.base_url ?? TAVILY_BASE_URL);
    return new HttpSearchProvider('tavily', timeoutMs, (query, maxResults) => ({
      url: endpoint,
      init: {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, max_results: maxResults, search_depth: 'basic' }),
      },
    }));
  }
  if (config.base_url === undefined) throw new ConfigError(['web.search.base_url: SearXNG needs base_url: the address of the instance']);
  const endpoint = endpointUrl(config.base_url);
  return new HttpSearchProvider('searxng', timeoutMs, (query) => {
    const url = new URL(endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    return { url: url.href, init: { method: 'GET', headers: { accept: 'application/json' } } };
  });
}

/** `<base>/search`, keeping a path the base may have (a SearXNG behind `/searx`). */
function endpointUrl(base: string): string {
  try {
    return new URL('search', base.endsWith('/') ? base : `${base}/`).href;
  } catch (error) {
    // Not the URL itself: it may hold credentials (https://user:pass@searx.example).
    throw new ConfigError(['web.search.base_url: not a valid URL'], { cause: error });
  }
}

type BuildRequest = (query: string, maxResults: number) => { url: string; init: RequestInit };

/** Both providers answer `{ results: [{ title, url, content }] }`; they differ in how they are asked. */
class HttpSearchProvider implements SearchProvider {
  constructor(
    readonly name: 'tavily' | 'searxng',
    private readonly timeoutMs: number,
    private readonly buildRequest: BuildRequest,
  ) {}

  async search(query: string, options: { maxResults: number; signal?: AbortSignal }): Promise<SearchResult[]> {
    if (options.signal?.aborted) throw cancelled();
    if (options.maxResults <= 0) return [];
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal === undefined ? deadline : AbortSignal.any([deadline, options.signal]);
    const request = this.buildRequest(query, options.maxResults);
    let body: string;
    try {
      const response = await fetch(request.url, { ...request.init, signal });
      if (!response.ok) {
        // Unread bodies hold their connection until collected.
        await response.body?.cancel().catch(() => undefined);
        throw statusError(response.status, this.name);
      }
      body = await response.text();
    } catch (error) {
      if (error instanceof SearchError) throw error;
      if (options.signal?.aborted) throw cancelled(error);
      if (deadline.aborted) throw unreachable(`no answer within ${formatSeconds(this.timeoutMs)}`, error);
      throw unreachable(networkReason(error), error);
    }
    return parseResults(body, options.maxResults);
  }
}

function statusError(status: number, provider: 'tavily' | 'searxng'): SearchError {
  if (status === 401 || status === 403) {
    // SearXNG takes no key: its 403 means the instance does not serve JSON (`search.formats` in its settings.yml).
    if (provider === 'searxng') {
      return new SearchError('refused', 'the search provider refused the request (the SearXNG instance may not allow the JSON format)');
    }
    return new SearchError('refused', 'the search provider refused the key');
  }
  if (status === 429) return new SearchError('rate_limited', 'the search provider is rate-limiting; try again later');
  if (status >= 500) return unreachable(`HTTP ${status}`);
  return new SearchError('refused', `the search provider rejected the request (HTTP ${status})`);
}

function unreachable(reason: string, cause?: unknown): SearchError {
  return new SearchError('unreachable', `the search provider is unreachable (${reason})`, cause === undefined ? {} : { cause });
}

function cancelled(cause?: unknown): SearchError {
  return new SearchError('cancelled', 'the search was cancelled', cause === undefined ? {} : { cause });
}

/** undici's `fetch failed` carries the socket's error code (`ECONNREFUSED`, `ENOTFOUND`) in `cause`: the useful part. */
function networkReason(error: unknown): string {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
  }
  return 'network error';
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

const MALFORMED = 'the search provider answered with something that is not search results';

/** `{ results: [...] }` to results: entries that are not objects or lack an http(s) URL are skipped, not fatal. */
function parseResults(body: string, maxResults: number): SearchResult[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new SearchError('malformed', MALFORMED, { cause: error });
  }
  const results = (parsed as { results?: unknown } | null)?.results;
  if (typeof parsed !== 'object' || !Array.isArray(results)) throw new SearchError('malformed', MALFORMED);
  const kept: SearchResult[] = [];
  for (const entry of results) {
    if (kept.length >= maxResults) break;
    if (typeof entry !== 'object' || entry === null) continue;
    const { title, url, content } = entry as Record<string, unknown>;
    const href = webUrl(url);
    if (href === undefined) continue;
    kept.push({
      title: shorten(typeof title === 'string' ? collapse(title) : '', MAX_TITLE_CHARS) || href,
      url: href,
      snippet: shorten(typeof content === 'string' ? collapse(content) : '', MAX_SNIPPET_CHARS),
    });
  }
  return kept;
}

/** The URL when it is http(s); a `javascript:` or `data:` URL must not reach the model as a link. */
function webUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** At most `maxChars` characters, an ellipsis included when cut. */
function shorten(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
}

export { SearchError, type SearchFailure } from './errors.js';
