/**
 * The helpers' progress as a run streams it (`custom` stream mode), shared by the `task` tool
 * that writes it and the manager that shows it as the chat's status line.
 */

/** One helper of a run. */
export interface HelperProgress {
  description: string;
  state: 'waiting' | 'working' | 'done' | 'failed';
}

export const HELPERS_EVENT = 'helpers';

/** What the `task` tool writes to the run's `custom` stream: every helper of the run so far. */
export interface HelpersEvent {
  type: typeof HELPERS_EVENT;
  helpers: HelperProgress[];
}
