import { z } from 'zod';
import { isValidTimeZone } from './when.js';

/** The server's own time zone, as the process reads it (`TZ`, else the system's). */
function serverTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** `schedules:`: work the agent does on a clock and answers into the chat it was asked in (issue #17). */
export const schedulesConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Whether /schedule works; off: the command says so and nothing fires.'),
    timezone: z
      .string()
      .refine(isValidTimeZone, 'an IANA time zone such as Europe/Berlin or UTC')
      .optional()
      .describe("How wall-clock words (09:00, tomorrow) are read and run times shown; absent: the server's time zone."),
    min_interval_seconds: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(60)
      .describe('The shortest time between two runs of one schedule that people may ask for.'),
    missed_after_seconds: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(60)
      .describe('How late an occurrence may fire before it counts as missed (it fell while no process ran): a missed one follows the schedule\'s missed policy.'),
    max_per_user: z.number().int().min(1).max(1000).default(20).describe('Active and paused schedules one person may have at once.'),
  })
  .prefault({});

export type SchedulesConfig = z.infer<typeof schedulesConfigSchema>;

/** The zone schedules are read in: the configured one, else the server's. */
export function scheduleTimeZone(config: SchedulesConfig): string {
  return config.timezone ?? serverTimeZone();
}
