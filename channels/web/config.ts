import { z } from 'zod';

/** `channels.web` of config.yaml: the chat page of the server's own console (`/chat`). */
export const webConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Serve the web chat (`/chat` in the console, `/api/chat/web`). It admits whoever the API admits: people with their API key when the server requires keys, everyone who can reach the server when it does not.',
      ),
    max_file_bytes: z
      .number()
      .int()
      .positive()
      .max(50 * 1024 * 1024)
      .default(20 * 1024 * 1024)
      .describe('Largest file a person may upload or the agent may send in the web chat, in bytes (at most 50 MiB).'),
  })
  .prefault({});

export type WebConfig = z.output<typeof webConfigSchema>;
