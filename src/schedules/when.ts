import { Cron } from 'croner';
import { codeSpan, literalMarkdown as quoted } from '../channel/markdown-syntax.js';

/**
 * What people type after `/schedule`, read into a schedule: the when at the start, the task after it.
 * Pure: the clock comes in through the options, croner objects are made without a callback (no timers).
 *
 * Wall-clock words are read in the person's time zone, with croner's rule for fixed times around DST:
 * a time the clock skips (02:30 on a spring-forward night) runs when the clock jumps (03:00), a time
 * that happens twice runs at its first occurrence. Recurring and one-off times follow the same rule.
 */

/** Every text of this module people read, in one place. Errors are shown in chat as Markdown, with what the person typed quoted. */
export const WHEN_MESSAGES = {
  unrecognised:
    'I could not tell when to run that. Start with the when, then the task, like `every weekday 09:00 summarise the open PRs`, ' +
    '`in 2h check the deploy`, `tomorrow 8:30 send the report` or a cron expression such as `0 9 * * 1-5 summarise the open PRs`.',
  missingTask: (when: string) =>
    `I know when (${quoted(when)}) but not what to do. Add the task after the when, like \`every weekday 09:00 summarise the open PRs\`.`,
  taskTooLong: (max: number) => `That task is too long. Shorten it to at most ${max} characters.`,
  invalidCron: (expression: string, reason: string) =>
    `${codeSpan(expression)} is not a valid cron expression (${reason}). ` +
    'Use five fields, minute hour day-of-month month day-of-week, like `0 9 * * 1-5`.',
  cronNeverRuns: (expression: string) =>
    `The cron expression ${codeSpan(expression)} never matches a real date, so it would never run. ` +
    'Check its day and month, like `0 9 1 * *` for every 1st.',
  tooOften: (limit: string, example: string) =>
    `That runs too often: here a schedule may run ${limit}. Pick a longer interval, like \`${example}\`.`,
  intervalTooLong: 'That interval is longer than a year. Pick at most 366 days, like `every 30 days`.',
  invalidTime: (text: string) => `${codeSpan(text)} is not a time of day. Write times like 9:30, 21:00 or 9pm.`,
  timeNeeded: 'After `at`, write a time of day, like 9:30, 21:00 or 9pm.',
  invalidDate: (text: string) => `${codeSpan(text)} is not a date on the calendar. Write dates as YYYY-MM-DD, like 2026-12-24.`,
  notFuture: (when: string) => `${quoted(when)} is not in the future. Pick a later time, like \`in 2h\` or \`tomorrow 9:00\`.`,
  tooFarAhead: 'That is more than 366 days ahead. Pick a time within the next year.',
  unknownTimeZone: (name: string) => `${codeSpan(name)} is not a time zone I know. Use an IANA name, like Europe/Berlin or UTC.`,
  atMostOnce: (count: number, unit: string) =>
    count === 1 ? `at most once ${unit === 'hour' ? 'an' : 'a'} ${unit}` : `at most once every ${count} ${unit}s`,
  every: (interval: string) => `every ${interval}`,
  everyAt: (days: string, time: string) => `every ${days} at ${time}`,
  cron: (expression: string) => `cron ${expression}`,
  once: (when: string) => `once, ${when}`,
  runTime: (date: string, time: string, timezone: string) => `${date}, ${time} (${timezone})`,
  /** What follows `every` for the day-of-week fields the wall-clock phrases make. */
  dayGroups: { '*': 'day', 'MON-FRI': 'weekday', 'SAT,SUN': 'weekend' },
  dayList: (names: readonly string[]) => (names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`),
} as const;

/** What a schedule fires on. Times are stored as ISO 8601 UTC strings; `timezone` is an IANA name. */
export type ScheduleSpec =
  /** A croner pattern of 5 or 6 fields (seconds first), read in `timezone`. */
  | { kind: 'cron'; expression: string; timezone: string }
  /** Runs at `anchor + k * seconds` for k ≥ 1; `anchor` is the creation instant, which does not fire itself. */
  | { kind: 'every'; seconds: number; anchor: string; timezone: string }
  /** Runs once at `at`; `timezone` is how it was typed and is shown. */
  | { kind: 'once'; at: string; timezone: string };

/** A `/schedule` input read: the spec and the task (trimmed), or a sentence to show the person. */
export type ParsedSchedule = { ok: true; spec: ScheduleSpec; task: string } | { ok: false; error: string };

/** How `parseSchedule` reads an input. */
export interface ParseOptions {
  /** The instant the person asked: relative words (in 2h, tomorrow) and the first runs count from it. */
  now: Date;
  /** IANA zone the person's wall-clock words are read in. */
  timezone: string;
  /** The operator's minimum time between two runs of one schedule, in seconds (default config 60); below 1 counts as 1. */
  minIntervalSeconds: number;
}

/** The longest task kept, in characters (code points). */
export const MAX_TASK_CHARS = 2000;

/** A day phrase without a time (`tomorrow`, `every monday`) means this, the start of a working day. */
const DEFAULT_TIME: WallTime = { hour: 9, minute: 0 };
/** How far ahead a one-off may be, and how long an interval: a year, leap day included. */
const MAX_AHEAD_SECONDS = 366 * 86_400;
/** Runs looked at to find a cron's shortest gap: enough to see a short burst in a day or a week. */
const CRON_RUNS_SAMPLED = 11;
const CRON_MODE = '5-or-6-parts';
const DAY_MS = 86_400_000;

type WallTime = { hour: number; minute: number };
type CalendarDay = { year: number; month: number; day: number };
type Reading = { spec: ScheduleSpec; end: number } | { error: string };
type Reader = (text: string, context: ParseOptions) => Reading | undefined;

/** Cron day-of-week order (0 = Sunday); people's lists are shown Monday first. */
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const MONDAY_FIRST = [1, 2, 3, 4, 5, 6, 0];
const DAY_WORDS = new Map<string, number>([
  ...WEEKDAYS.flatMap((name, day) => [name, `${name}s`, name.slice(0, 3)].map((word) => [word.toLowerCase(), day] as const)),
  ...([['tues', 2], ['weds', 3], ['thur', 4], ['thurs', 4]] as const),
]);
// Longest first, so `mondays` is not read as `mon` + `days`.
const DAY_WORD = `(?:${[...DAY_WORDS.keys()].sort((a, b) => b.length - a.length).join('|')})`;
const DAY_LIST = String.raw`${DAY_WORD}(?:\s*,\s*(?:and\s+)?${DAY_WORD}|\s+and\s+${DAY_WORD})*`;
const UNIT = '(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w)';
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
const END = String.raw`(?=\s|$)`;

const QUOTED_CRON = /^["“”]([^"“”]+)["“”](?=\s|$)/;
// Greedy: six such fields are read as a 6-field pattern, so a task starting with a number needs the quotes.
const BARE_CRON = /^[\d*/,-]+(?:\s+[\d*/,-]+){4,5}(?=\s|$)/;
const EVERY_INTERVAL = new RegExp(String.raw`^every\s+(\d+)\s*${UNIT}${END}`, 'i');
const EVERY_CLOCK = /^(?:every\s+(minute)|every\s+hour|hourly)(?=\s|$)/i;
const EVERY_DAYS = new RegExp(String.raw`^(?:daily|every\s+(day|weekdays?|weekends?|${DAY_LIST}))${END}`, 'i');
const IN_DURATION = new RegExp(String.raw`^in\s+(\d+|an?)\s*${UNIT}${END}`, 'i');
const RELATIVE_DAY = /^(today|tomorrow)(?=\s|$)/i;
const ON_WEEKDAY = new RegExp(String.raw`^on\s+(${DAY_WORD})${END}`, 'i');
const ON_DATE = /^(?:on\s+)?(\d{4})-(\d{2})-(\d{2})(?=\s|$)/i;
const AT_WORD = /^\s*at(?=\s|$)/i;
const CLOCK = /^\s+(?:(noon|midnight)|(\d{1,2})(?::(\d{1,2}))?(?:\s*([ap]m))?)(?=\s|$)/i;

/**
 * Splits `input` ("every weekday 09:00 summarise the open PRs") into when + task and validates both.
 * The when must come first (case-insensitive); the rest, trimmed, is the task. Never throws.
 */
export function parseSchedule(input: string, options: ParseOptions): ParsedSchedule {
  if (!isValidTimeZone(options.timezone)) return { ok: false, error: WHEN_MESSAGES.unknownTimeZone(options.timezone) };
  const text = input.trim();
  // Below one second, runs would pile up in the same instant.
  const reading = readWhen(text, { ...options, minIntervalSeconds: Math.max(1, options.minIntervalSeconds) });
  if (reading === undefined) return { ok: false, error: WHEN_MESSAGES.unrecognised };
  if ('error' in reading) return { ok: false, error: reading.error };
  const task = text.slice(reading.end).trim();
  if (task === '') return { ok: false, error: WHEN_MESSAGES.missingTask(describeSchedule(reading.spec)) };
  if ([...task].length > MAX_TASK_CHARS) return { ok: false, error: WHEN_MESSAGES.taskTooLong(MAX_TASK_CHARS) };
  return { ok: true, spec: reading.spec, task };
}

/** The first run strictly after `after`, or undefined when there is none (a `once` in the past). Throws for a cron croner refuses. */
export function nextRunAfter(spec: ScheduleSpec, after: Date): Date | undefined {
  switch (spec.kind) {
    case 'cron':
      return cronOf(spec).nextRun(after) ?? undefined;
    case 'every': {
      const [anchor, step] = [Date.parse(spec.anchor), spec.seconds * 1000];
      return new Date(anchor + step * Math.max(1, Math.floor((after.getTime() - anchor) / step) + 1));
    }
    case 'once':
      return Date.parse(spec.at) > after.getTime() ? new Date(spec.at) : undefined;
  }
}

/**
 * How people read a spec, in English: "every weekday at 09:00", "every 2 hours", "cron 0 9 * * 1-5",
 * "once, Fri 11 Dec 2026 08:30". Crons in the shape the wall-clock phrases make (`0 9 * * MON-FRI`,
 * `0 9 * * *`, `0 * * * *`) read as words; any other cron as itself. Times are in the spec's zone, which is not named.
 */
export function describeSchedule(spec: ScheduleSpec): string {
  switch (spec.kind) {
    case 'cron':
      return cronInWords(spec.expression) ?? WHEN_MESSAGES.cron(spec.expression);
    case 'every':
      return WHEN_MESSAGES.every(intervalWords(spec.seconds).phrase);
    case 'once': {
      const parts = readableParts(new Date(spec.at), spec.timezone);
      return WHEN_MESSAGES.once(`${parts.date} ${parts.time}`);
    }
  }
}

/** `date` as a person in `timezone` reads it: "Mon 7 Dec 2026, 09:00 (Europe/Berlin)". 24-hour clock. */
export function formatRunTime(date: Date, timezone: string): string {
  const parts = readableParts(date, timezone);
  return WHEN_MESSAGES.runTime(parts.date, parts.time, timezone);
}

/** True for a time zone name Intl accepts ("Europe/Berlin", "UTC"; Intl ignores case). */
export function isValidTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const READERS: readonly Reader[] = [readCron, readEvery, readIn, readRelativeDay, readAt, readOnWeekday, readOnDate];

function readWhen(text: string, context: ParseOptions): Reading | undefined {
  for (const read of READERS) {
    const reading = read(text, context);
    if (reading !== undefined) return reading;
  }
  return undefined;
}

function readCron(text: string, context: ParseOptions): Reading | undefined {
  const quoted = QUOTED_CRON.exec(text);
  const match = quoted ?? BARE_CRON.exec(text);
  if (match === null) return undefined;
  const expression = (quoted?.[1] ?? match[0]).trim().split(/\s+/).join(' ');
  return checkedCron(expression, match[0].length, context);
}

function readEvery(text: string, context: ParseOptions): Reading | undefined {
  const interval = EVERY_INTERVAL.exec(text);
  if (interval !== null) return checkedEvery(Number(interval[1]) * unitSeconds(interval[2]!), interval[0].length, context);
  const clock = EVERY_CLOCK.exec(text);
  if (clock !== null) return checkedCron(clock[1] === undefined ? '0 * * * *' : '* * * * *', clock[0].length, context);
  const days = EVERY_DAYS.exec(text);
  if (days === null) return undefined;
  const time = readTime(text, days[0].length);
  if ('error' in time) return time;
  const { hour, minute } = time.time ?? DEFAULT_TIME;
  return checkedCron(`${minute} ${hour} * * ${dayOfWeekField(days[1]?.toLowerCase() ?? 'day')}`, time.end, context);
}

function readIn(text: string, context: ParseOptions): Reading | undefined {
  const match = IN_DURATION.exec(text);
  if (match === null) return undefined;
  const count = /^\d/.test(match[1]!) ? Number(match[1]) : 1;
  return checkedOnce(context.now.getTime() + count * unitSeconds(match[2]!) * 1000, match[0].length, context);
}

function readRelativeDay(text: string, context: ParseOptions): Reading | undefined {
  const match = RELATIVE_DAY.exec(text);
  if (match === null) return undefined;
  const [today, tomorrow] = daysFromToday(2, context);
  return readOnceOnFirstOf(match[1]!.toLowerCase() === 'tomorrow' ? [tomorrow!] : [today!], text, match[0].length, context);
}

/** `at TIME`: today at that time, or tomorrow when it has passed today. */
function readAt(text: string, context: ParseOptions): Reading | undefined {
  return AT_WORD.test(text) ? readOnceOnFirstOf(daysFromToday(2, context), text, 0, context) : undefined;
}

/** `on monday [TIME]`: the soonest such day whose time is still ahead, so today counts until its time has passed. */
function readOnWeekday(text: string, context: ParseOptions): Reading | undefined {
  const match = ON_WEEKDAY.exec(text);
  if (match === null) return undefined;
  const weekday = DAY_WORDS.get(match[1]!.toLowerCase());
  return readOnceOnFirstOf(daysFromToday(8, context).filter((day) => weekdayOf(day) === weekday), text, match[0].length, context);
}

function readOnDate(text: string, context: ParseOptions): Reading | undefined {
  const match = ON_DATE.exec(text);
  if (match === null) return undefined;
  const day = { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) };
  if (!isCalendarDay(day)) return { error: WHEN_MESSAGES.invalidDate(`${match[1]}-${match[2]}-${match[3]}`) };
  return readOnceOnFirstOf([day], text, match[0].length, context);
}

/** The first of `days` whose time (read from `from`, default 09:00) is still ahead; else the last, refused as past. */
function readOnceOnFirstOf(days: readonly CalendarDay[], text: string, from: number, context: ParseOptions): Reading {
  const time = readTime(text, from);
  if ('error' in time) return time;
  const runs = days.map((day) => instantOf(day, time.time ?? DEFAULT_TIME, context.timezone));
  return checkedOnce(runs.find((at) => at > context.now.getTime()) ?? runs.at(-1) ?? Number.NaN, time.end, context);
}

function daysFromToday(count: number, context: ParseOptions): CalendarDay[] {
  const today = calendarDayIn(context.now, context.timezone);
  return Array.from({ length: count }, (_, offset) => addDays(today, offset));
}

/** An optional `[at] TIME` from `from` on; `at` without a time, or a time that is not one (25:00), is an error. */
function readTime(text: string, from: number): { time: WallTime | undefined; end: number } | { error: string } {
  const rest = text.slice(from);
  const at = AT_WORD.exec(rest);
  const afterAt = at === null ? 0 : at[0].length;
  const clock = CLOCK.exec(rest.slice(afterAt));
  if (clock === null) return at === null ? { time: undefined, end: from } : { error: WHEN_MESSAGES.timeNeeded };
  const time = wallTimeOf(clock);
  if (time === undefined) return { error: WHEN_MESSAGES.invalidTime(clock[0].trim()) };
  return { time, end: from + afterAt + clock[0].length };
}

function wallTimeOf([, word, hourText, minuteText, meridiem]: RegExpExecArray): WallTime | undefined {
  if (word !== undefined) return { hour: word.toLowerCase() === 'noon' ? 12 : 0, minute: 0 };
  const hour = Number(hourText);
  const minute = Number(minuteText ?? 0);
  if ((minuteText !== undefined && minuteText.length !== 2) || minute > 59) return undefined;
  if (meridiem === undefined) return hour <= 23 ? { hour, minute } : undefined;
  if (hour < 1 || hour > 12) return undefined;
  return { hour: (hour % 12) + (meridiem.toLowerCase() === 'pm' ? 12 : 0), minute };
}

function checkedCron(expression: string, end: number, context: ParseOptions): Reading {
  const spec: ScheduleSpec = { kind: 'cron', expression, timezone: context.timezone };
  const fields = expression.split(' ').length;
  if (!expression.startsWith('@') && fields !== 5 && fields !== 6) {
    return { error: WHEN_MESSAGES.invalidCron(expression, `it has ${fields} fields, not 5 or 6`) };
  }
  let runs: Date[];
  try {
    runs = cronOf(spec).nextRuns(CRON_RUNS_SAMPLED, context.now);
  } catch (error) {
    // Croner's own reason ("Invalid value for minute: 61") is specific; its class prefix is not for people.
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^Cron\w*: /, '');
    return { error: WHEN_MESSAGES.invalidCron(expression, reason) };
  }
  if (runs.length === 0) return { error: WHEN_MESSAGES.cronNeverRuns(expression) };
  const shortestGapMs = Math.min(...runs.slice(1).map((run, index) => run.getTime() - runs[index]!.getTime()));
  return shortestGapMs < context.minIntervalSeconds * 1000 ? tooOften(context) : { spec, end };
}

function checkedEvery(seconds: number, end: number, context: ParseOptions): Reading {
  if (seconds < context.minIntervalSeconds) return tooOften(context);
  if (seconds > MAX_AHEAD_SECONDS) return { error: WHEN_MESSAGES.intervalTooLong };
  return { spec: { kind: 'every', seconds, anchor: context.now.toISOString(), timezone: context.timezone }, end };
}

function checkedOnce(atMs: number, end: number, context: ParseOptions): Reading {
  // Negated so that NaN (no such instant) is refused too.
  if (!(atMs <= context.now.getTime() + MAX_AHEAD_SECONDS * 1000)) return { error: WHEN_MESSAGES.tooFarAhead };
  if (atMs <= context.now.getTime()) return { error: WHEN_MESSAGES.notFuture(formatRunTime(new Date(atMs), context.timezone)) };
  return { spec: { kind: 'once', at: new Date(atMs).toISOString(), timezone: context.timezone }, end };
}

function tooOften(context: ParseOptions): { error: string } {
  const { count, unit, phrase } = intervalWords(context.minIntervalSeconds);
  return { error: WHEN_MESSAGES.tooOften(WHEN_MESSAGES.atMostOnce(count, unit), WHEN_MESSAGES.every(phrase)) };
}

function cronOf(spec: { expression: string; timezone: string }): Cron {
  return new Cron(spec.expression, { timezone: spec.timezone, mode: CRON_MODE });
}

function unitSeconds(unit: string): number {
  return UNIT_SECONDS[unit[0]!.toLowerCase()]!;
}

/** `seconds` in the largest unit that divides it: { count: 2, unit: 'hour', phrase: '2 hours' }, or 'minute' for one. */
function intervalWords(seconds: number): { count: number; unit: string; phrase: string } {
  const units = [['week', 604_800], ['day', 86_400], ['hour', 3600], ['minute', 60]] as const;
  const [unit, size] = units.find(([, unitSize]) => seconds % unitSize === 0) ?? ['second', 1];
  const count = seconds / size;
  return { count, unit, phrase: count === 1 ? unit : `${count} ${unit}s` };
}

/** The day-of-week field for what followed `every`: names, so such crons read back as words (see describeSchedule). */
function dayOfWeekField(days: string): string {
  if (days === 'day') return '*';
  if (days.startsWith('weekday')) return 'MON-FRI';
  if (days.startsWith('weekend')) return 'SAT,SUN';
  const chosen = new Set(days.split(/[^a-z]+/).flatMap((word) => DAY_WORDS.get(word) ?? []));
  if (chosen.size === 7) return '*';
  return MONDAY_FIRST.filter((day) => chosen.has(day))
    .map((day) => WEEKDAYS[day]!.slice(0, 3).toUpperCase())
    .join(',');
}

function cronInWords(expression: string): string | undefined {
  if (expression === '* * * * *') return WHEN_MESSAGES.every('minute');
  if (expression === '0 * * * *') return WHEN_MESSAGES.every('hour');
  const match = /^(\d{1,2}) (\d{1,2}) \* \* (\*|MON-FRI|[A-Z]{3}(?:,[A-Z]{3})*)$/.exec(expression);
  if (match === null || Number(match[1]) > 59 || Number(match[2]) > 23) return undefined;
  const days = daysInWords(match[3]!);
  return days === undefined ? undefined : WHEN_MESSAGES.everyAt(days, `${match[2]!.padStart(2, '0')}:${match[1]!.padStart(2, '0')}`);
}

function daysInWords(field: string): string | undefined {
  const group = Object.entries(WHEN_MESSAGES.dayGroups).find(([groupField]) => groupField === field);
  if (group !== undefined) return group[1];
  const names = field.split(',').map((short) => WEEKDAYS.find((name) => name.slice(0, 3).toUpperCase() === short));
  return names.every((name) => name !== undefined) ? WHEN_MESSAGES.dayList(names) : undefined;
}

const READABLE_DATE: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' };

// Parts, not the formatted string, so the shape does not depend on the ICU version's punctuation.
function partsIn(date: Date, timezone: string, options: Intl.DateTimeFormatOptions): Record<string, string> {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, ...options }).formatToParts(date);
  return Object.fromEntries(parts.map((part) => [part.type, part.value]));
}

function readableParts(date: Date, timezone: string): { date: string; time: string } {
  const parts = partsIn(date, timezone, { ...READABLE_DATE, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return { date: `${parts.weekday} ${parts.day} ${parts.month} ${parts.year}`, time: `${parts.hour}:${parts.minute}` };
}

function calendarDayIn(date: Date, timezone: string): CalendarDay {
  const parts = partsIn(date, timezone, { year: 'numeric', month: 'numeric', day: 'numeric' });
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day) };
}

function addDays({ year, month, day }: CalendarDay, days: number): CalendarDay {
  const date = new Date(Date.UTC(year, month - 1, day + days));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

function weekdayOf({ year, month, day }: CalendarDay): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay();
}

function isCalendarDay(day: CalendarDay): boolean {
  const rolled = addDays(day, 0);
  return rolled.year === day.year && rolled.month === day.month && rolled.day === day.day;
}

/**
 * The instant `time` on `day` is in `timezone`. Croner does the zone arithmetic, and its fixed-time
 * DST rule is what recurring schedules follow too: a skipped time runs when the clock jumps, a
 * repeated one at its first occurrence. Searching from two days before lands on that very day.
 */
function instantOf(day: CalendarDay, time: WallTime, timezone: string): number {
  const cron = cronOf({ expression: `${time.minute} ${time.hour} ${day.day} ${day.month} *`, timezone });
  return cron.nextRun(new Date(Date.UTC(day.year, day.month - 1, day.day) - 2 * DAY_MS))?.getTime() ?? Number.NaN;
}
