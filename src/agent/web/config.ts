import { z } from 'zod';

/**
 * `web:` section: the agent's `web_search` and `web_fetch` tools. Both are off unless configured:
 * the server then reaches the internet on the model's behalf. Composed into the root config
 * schema by `src/config/`.
 */
export const webConfigSchema = z
  .strictObject({
    search: z
      .strictObject({
        provider: z.enum(['tavily', 'searxng']).describe('tavily: Tavily’s search API (needs api_key); searxng: a SearXNG instance (needs base_url).'),
        base_url: z.url().optional().describe('The provider’s address; absent: https://api.tavily.com for Tavily.'),
        api_key: z.string().min(1).optional().describe('Tavily’s key, e.g. $TAVILY_API_KEY.'),
        max_results: z.number().int().min(1).max(20).default(5).describe('Results one search returns to the agent.'),
        timeout_seconds: z.number().positive().default(15),
      })
      .refine((search) => search.provider !== 'tavily' || search.api_key !== undefined, {
        message: 'Tavily needs api_key (e.g. $TAVILY_API_KEY)',
        path: ['api_key'],
      })
      .refine((search) => search.provider !== 'searxng' || search.base_url !== undefined, {
        message: 'SearXNG needs base_url: the address of the instance',
        path: ['base_url'],
      })
      .optional()
      .describe('Gives the agent web_search; absent: no search.'),
    fetch: z
      .strictObject({
        enabled: z.boolean().default(false).describe('Gives the agent web_fetch: it reads a web page as text.'),
        max_download_bytes: z.number().int().positive().default(5 * 1024 * 1024).describe('Bytes read of one page at most.'),
        max_chars: z.number().int().positive().default(20_000).describe('Characters of readable text the agent gets from one page.'),
        timeout_seconds: z.number().positive().default(20),
        allow_networks: z
          .array(z.string().min(1))
          .default([])
          .describe(
            'Private networks web_fetch may reach anyway, as CIDRs (e.g. 10.20.0.0/16 for an intranet wiki). By default loopback, private, link-local and other internal addresses are refused.',
          ),
      })
      .prefault({}),
  })
  .prefault({});

export type WebConfig = z.infer<typeof webConfigSchema>;
