import { z } from 'zod';

export const serverConfigSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1').describe('Interface the HTTP server listens on.'),
    port: z
      // A numeric string too: what `${PORT:-8001}` gives, since variables are text.
      .union([z.number(), z.string().trim().regex(/^\d+$/).transform(Number)], { error: 'a port number, 0 to 65535' })
      .pipe(z.number().int().min(0).max(65535))
      .default(8001)
      .describe('HTTP port (a number or a numeric string); 0 picks a free one.'),
    public_url: z
      .url()
      .default('http://localhost:8001')
      .describe('Address users reach the server at; used in links the server hands out.'),
    metrics_public: z
      .boolean()
      .default(false)
      .describe('Serve GET /metrics without a key (for a scraper that cannot send one); otherwise it needs a key whenever the API does.'),
  })
  .prefault({});

export type ServerConfig = z.infer<typeof serverConfigSchema>;
