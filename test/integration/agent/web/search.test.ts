import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSearchProvider, SearchError, type SearchProviderConfig } from '../../../../src/agent/web/search.js';
import { ConfigError } from '../../../../src/errors.js';
import { type FakeSearchHit, FakeSearchProvider } from '../../../fakes/search/index.js';

const API_KEY = 'tvly-secret-0123456789abcdef';

const hits: FakeSearchHit[] = Array.from({ length: 8 }, (_, i) => ({
  title: `Result ${i + 1}`,
  url: `https://example.com/page-${i + 1}`,
  content: `Snippet number ${i + 1}.`,
}));

/** The error `promise` rejects with, which must be a SearchError. */
async function searchError(promise: Promise<unknown>): Promise<SearchError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(SearchError);
  return error as SearchError;
}

describe('createSearchProvider against a fake provider', () => {
  const fake = new FakeSearchProvider({ apiKey: API_KEY });
  let tavilyConfig: SearchProviderConfig;
  let searxngConfig: SearchProviderConfig;

  beforeAll(async () => {
    const baseURL = await fake.start();
    tavilyConfig = { provider: 'tavily', base_url: baseURL, api_key: API_KEY, timeout_seconds: 5 };
    searxngConfig = { provider: 'searxng', base_url: baseURL, timeout_seconds: 5 };
  });
  afterAll(() => fake.stop());
  beforeEach(() => {
    fake.requests.length = 0;
    fake.results = hits;
    fake.respond = undefined;
    fake.fail = undefined;
    fake.malformed = undefined;
    fake.hang = false;
  });

  describe('tavily', () => {
    it('posts the query with the bearer key and returns the results in order, capped', async () => {
      const provider = createSearchProvider(tavilyConfig);
      const results = await provider.search('streaming parsers', { maxResults: 3 });

      expect(provider.name).toBe('tavily');
      expect(results).toEqual([
        { title: 'Result 1', url: 'https://example.com/page-1', snippet: 'Snippet number 1.' },
        { title: 'Result 2', url: 'https://example.com/page-2', snippet: 'Snippet number 2.' },
        { title: 'Result 3', url: 'https://example.com/page-3', snippet: 'Snippet number 3.' },
      ]);
      const [request] = fake.requests;
      expect(request).toMatchObject({ method: 'POST', path: '/search' });
      expect(request?.body).toEqual({ query: 'streaming parsers', max_results: 3, search_depth: 'basic' });
      expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request?.headers['content-type']).toBe('application/json');
    });

    it('answers each query by its text', async () => {
      fake.respond = (query) => [{ title: `About ${query}`, url: 'https://example.com/about', content: 'x' }];
      const results = await createSearchProvider(tavilyConfig).search('cats', { maxResults: 5 });
      expect(results.map((result) => result.title)).toEqual(['About cats']);
    });

    it('says the key was refused on 401, without the key', async () => {
      const provider = createSearchProvider({ ...tavilyConfig, api_key: 'tvly-wrong-key-9876543210' });
      const error = await searchError(provider.search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider refused the key');
      expect(error.failure).toBe('refused');
      expect(fake.requests[0]?.headers.authorization).toBe('Bearer tvly-wrong-key-9876543210');
      expect(`${error.message} ${error.userMessage} ${String(error.cause ?? '')}`).not.toContain('tvly-wrong-key');
    });

    it('says the key was refused on 403', async () => {
      fake.fail = { status: 403 };
      const error = await searchError(createSearchProvider(tavilyConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider refused the key');
    });

    it('says the provider is rate-limiting on 429', async () => {
      fake.fail = { status: 429 };
      const error = await searchError(createSearchProvider(tavilyConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider is rate-limiting; try again later');
      expect(error.failure).toBe('rate_limited');
      expect(error.code).toBe('RATE_LIMITED');
    });

    it('says the provider is unreachable on 500', async () => {
      fake.fail = { status: 500 };
      const error = await searchError(createSearchProvider(tavilyConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider is unreachable (HTTP 500)');
      expect(error.message).not.toContain(API_KEY);
    });

    it('says the answer is not search results when it is not JSON', async () => {
      fake.malformed = '<html>502 Bad Gateway</html>';
      const error = await searchError(createSearchProvider(tavilyConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider answered with something that is not search results');
      expect(error.failure).toBe('malformed');
    });

    it('says the answer is not search results when it is JSON without results', async () => {
      fake.malformed = JSON.stringify({ detail: 'something else' });
      const error = await searchError(createSearchProvider(tavilyConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider answered with something that is not search results');
    });

    it('gives up on a provider that never answers after timeout_seconds', async () => {
      fake.hang = true;
      const startedAt = performance.now();
      const error = await searchError(createSearchProvider({ ...tavilyConfig, timeout_seconds: 0.3 }).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider is unreachable (no answer within 0.3 s)');
      expect(error.message).not.toContain(API_KEY);
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(250);
      expect(fake.requests).toHaveLength(1);
    });

    it("stops when the caller's signal aborts, and says it was cancelled", async () => {
      fake.hang = true;
      const controller = new AbortController();
      const search = createSearchProvider(tavilyConfig).search('q', { maxResults: 3, signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const error = await searchError(search);
      expect(error.failure).toBe('cancelled');
      expect(error.message).toBe('the search was cancelled');
    });

    it('needs an api key', () => {
      expect(() => createSearchProvider({ provider: 'tavily', timeout_seconds: 5 })).toThrow(ConfigError);
    });
  });

  describe('searxng', () => {
    it('gets /search with the query and format=json, and returns the results in order, capped', async () => {
      const provider = createSearchProvider(searxngConfig);
      const results = await provider.search('rust & "async" io', { maxResults: 4 });

      expect(provider.name).toBe('searxng');
      expect(results.map((result) => result.url)).toEqual(hits.slice(0, 4).map((hit) => hit.url));
      expect(results[0]).toEqual({ title: 'Result 1', url: 'https://example.com/page-1', snippet: 'Snippet number 1.' });
      const [request] = fake.requests;
      expect(request).toMatchObject({ method: 'GET', path: '/search', query: { q: 'rust & "async" io', format: 'json' } });
      expect(request?.headers.authorization).toBeUndefined();
    });

    it('keeps a path in base_url', async () => {
      // The fake serves /search only: a base with a path must come out as <base>/search.
      const provider = createSearchProvider({ ...searxngConfig, base_url: `${fake.baseURL}/searx/` });
      await expect(provider.search('q', { maxResults: 3 })).rejects.toBeInstanceOf(SearchError);
      expect(fake.requests[0]?.path).toBe('/searx/search');
    });

    it('drops results whose url is not http(s), and trims long snippets', async () => {
      fake.results = [
        { title: 'Evil', url: 'javascript:alert(1)', content: 'click me' },
        { title: 'Data', url: 'data:text/html,<b>hi</b>', content: 'inline' },
        { title: 'Broken', url: 'not a url', content: 'nope' },
        { title: 'Good', url: 'http://example.org/good', content: `${'word '.repeat(300)}end` },
      ];
      const results = await createSearchProvider(searxngConfig).search('q', { maxResults: 10 });

      expect(results).toHaveLength(1);
      expect(results[0]?.url).toBe('http://example.org/good');
      expect(results[0]?.snippet.length).toBe(500);
      expect(results[0]?.snippet.endsWith('…')).toBe(true);
    });

    it('says the provider is rate-limiting on 429', async () => {
      fake.fail = { status: 429 };
      const error = await searchError(createSearchProvider(searxngConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider is rate-limiting; try again later');
    });

    it('says the provider is unreachable on 502', async () => {
      fake.fail = { status: 502 };
      const error = await searchError(createSearchProvider(searxngConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider is unreachable (HTTP 502)');
    });

    it('says the answer is not search results for malformed JSON', async () => {
      fake.malformed = '{"results": [';
      const error = await searchError(createSearchProvider(searxngConfig).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider answered with something that is not search results');
    });

    it('gives up on an instance that never answers after timeout_seconds', async () => {
      fake.hang = true;
      const error = await searchError(createSearchProvider({ ...searxngConfig, timeout_seconds: 0.3 }).search('q', { maxResults: 3 }));
      expect(error.message).toBe('the search provider is unreachable (no answer within 0.3 s)');
    });

    it('needs a base_url', () => {
      expect(() => createSearchProvider({ provider: 'searxng', timeout_seconds: 5 })).toThrow(ConfigError);
    });
  });

  it('says the provider is unreachable when nothing listens, naming the socket error', async () => {
    const gone = new FakeSearchProvider({ apiKey: API_KEY });
    const baseURL = await gone.start();
    await gone.stop();
    const error = await searchError(createSearchProvider({ ...tavilyConfig, base_url: baseURL }).search('q', { maxResults: 3 }));
    expect(error.message).toBe('the search provider is unreachable (ECONNREFUSED)');
    expect(error.message).not.toContain(API_KEY);
  });
});
