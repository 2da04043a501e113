import { z } from 'zod';

export const databaseConfigSchema = z
  .strictObject({
    url: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// URL')
      .optional()
      .describe('PostgreSQL connection URL. Absent: an embedded PGlite database under data_dir.'),
  })
  .prefault({});

export type DatabaseConfig = z.infer<typeof databaseConfigSchema>;
