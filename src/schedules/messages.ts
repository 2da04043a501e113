import { literalMarkdown as quoted } from '../channel/markdown-syntax.js';
import type { ScheduleRecord } from './types.js';
import { describeSchedule, formatRunTime } from './when.js';

/** Every text `/schedule` shows a person, in one place: Markdown, with what the person wrote `quoted`. */
export const SCHEDULE_MESSAGES = {
  disabled: 'Schedules are off on this server.',
  usage: [
    'Usage:',
    '/schedule <when> <task> — e.g. /schedule every weekday 09:00 summarise the open PRs',
    '/schedule list — your schedules in this chat',
    '/schedule pause <id> | resume <id> | cancel <id>',
    '/schedule timezone [zone] — the time zone your times are read in, e.g. /schedule timezone Europe/Berlin',
    'When: every day 8:30, every monday 9am, every 2h, in 30m, tomorrow 8:30, at 17:00, or a cron expression such as 0 9 * * 1-5.',
  ].join('\n'),
  created: (id: string, when: string, next: string, task: string) =>
    `Scheduled ${id}: ${quoted(when)}.\nNext run: ${next}.\nTask: ${quoted(task)}\nCancel it with /schedule cancel ${id}.`,
  none: 'You have no schedules in this chat. Make one with /schedule <when> <task>, e.g. /schedule every weekday 09:00 summarise the open PRs.',
  listHeader: 'Your schedules in this chat:',
  listLine: (id: string, when: string, state: string, task: string) => `• ${id} — ${quoted(when)} — ${state} — ${quoted(task)}`,
  nextRun: (next: string) => `next ${next}`,
  paused: 'paused',
  tooMany: (max: number) => `You have ${max} schedules already, the most one person may have here. Cancel one first with /schedule cancel <id>.`,
  notFound: (id: string) => `You have no schedule ${quoted(id)}. See yours with /schedule list.`,
  missingId: (action: string) => `Name the schedule: /schedule ${action} <id>. See yours with /schedule list.`,
  pausedOne: (id: string) => `Schedule ${id} paused. Resume it with /schedule resume ${id}.`,
  resumedOne: (id: string, next: string) => `Schedule ${id} resumed. Next run: ${next}.`,
  resumedNothingLeft: (id: string) => `Schedule ${id} has no run left to make, so it ended.`,
  cancelledOne: (id: string) => `Schedule ${id} cancelled.`,
  whenNotRead: (when: string) => `Only part of the when "${quoted(when)}" could be read. Write it like every weekday 09:00, in 2h or tomorrow 8:30.`,
  timezone: (zone: string, isChosen: boolean) =>
    `Your schedules are read in ${quoted(zone)}${isChosen ? '' : " (the server's)"}. Set yours with /schedule timezone <zone>, e.g. /schedule timezone America/New_York.`,
  timezoneSet: (zone: string) => `Your new schedules are read in ${quoted(zone)}. Schedules you made before keep the time zone they were made in.`,
  timezoneUnknown: (zone: string) => `${quoted(zone)} is not a time zone I know. Use an IANA name, like Europe/Berlin, America/New_York or UTC.`,
} as const;

/** A schedule's next run as its owner reads it, in the zone it was made in; `—` when none is left. */
export function nextRunText(schedule: ScheduleRecord): string {
  return schedule.nextRunAt === undefined ? '—' : formatRunTime(schedule.nextRunAt, schedule.spec.timezone);
}

/** What `/schedule` and `schedule_task` say once a schedule is made. */
export function createdText(schedule: ScheduleRecord): string {
  return SCHEDULE_MESSAGES.created(schedule.id, describeSchedule(schedule.spec), nextRunText(schedule), schedule.task);
}
