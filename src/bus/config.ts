import { z } from 'zod';

/** The keys of `channels:` that shape intake and the worker pool (reference §2, §4.1). */
export const intakeConfigShape = {
  max_concurrency: z
    .number()
    .int()
    .positive()
    .default(5)
    .describe('Messages handled at once; each holds one worker for its whole run.'),
  max_background_runs: z
    .number()
    .int()
    .positive()
    .default(4)
    .describe(
      'Fire-and-forget runs (GitHub agents, POST /threads/{id}/runs) working at once; more wait their turn, already holding their thread.',
    ),
  inbound_queue_maxsize: z
    .number()
    .int()
    .positive()
    .default(1000)
    .describe('Accepted messages waiting for a worker; past this new messages are refused before any acknowledgement.'),
  shutdown_grace_period_seconds: z
    .number()
    .nonnegative()
    .finite()
    .default(3)
    .describe('On shutdown, how long in-flight work may finish before it is cancelled.'),
  outbox_deadline_seconds: z
    .number()
    .positive()
    .finite()
    .default(900)
    .describe('How long a reply the platform would not take is tried again (the outbox) before it becomes a dead letter.'),
};

export interface IntakeConfig {
  max_concurrency: number;
  max_background_runs: number;
  inbound_queue_maxsize: number;
  shutdown_grace_period_seconds: number;
  outbox_deadline_seconds: number;
}
