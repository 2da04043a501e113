import { z } from 'zod';

/**
 * PGlite's buffer pool. Its default (128 MB) is sized for a database server; the embedded
 * default serves one team's chats, and the pool is most of PGlite's resident memory.
 */
export const DEFAULT_PGLITE_SHARED_BUFFERS = '16MB';

export const databaseConfigSchema = z
  .strictObject({
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
      .optional()
      .describe('PostgreSQL connection URL. Absent: an embedded PGlite database under data_dir.'),
    pglite_shared_buffers: z
      .string()
      .regex(/^[1-9][0-9]*(kB|MB|GB)$/, 'a size such as 16MB')
      .default(DEFAULT_PGLITE_SHARED_BUFFERS)
      .describe("The embedded PGlite database's buffer pool (PostgreSQL's shared_buffers); most of its resident memory."),
  })
  .prefault({});

export type DatabaseConfig = z.infer<typeof databaseConfigSchema>;
