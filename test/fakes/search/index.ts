/** A fake web search provider speaking Tavily's and SearXNG's wire formats. */

export type { FakeSearchHit, FakeSearchProviderOptions, FakeSearchRequest, FakeSearchResponder } from './server.js';
export { FakeSearchProvider } from './server.js';
