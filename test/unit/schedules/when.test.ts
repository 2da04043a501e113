import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  describeSchedule,
  formatRunTime,
  isValidTimeZone,
  MAX_TASK_CHARS,
  nextRunAfter,
  type ParseOptions,
  parseSchedule,
  type ScheduleSpec,
} from '../../../src/schedules/when.js';

// A Friday; 11:00 in Berlin (UTC+1 in winter).
const NOW = new Date('2026-12-04T10:00:00Z');
const ANCHOR = NOW.toISOString();

function options(timezone: string, overrides: Partial<ParseOptions> = {}): ParseOptions {
  return { now: NOW, timezone, minIntervalSeconds: 60, ...overrides };
}

function specOf(input: string, parseOptions: ParseOptions): ScheduleSpec {
  const parsed = parseSchedule(input, parseOptions);
  if (!parsed.ok) throw new Error(`expected ${input} to parse, got: ${parsed.error}`);
  return parsed.spec;
}

function errorOf(input: string, parseOptions: ParseOptions): string {
  const parsed = parseSchedule(input, parseOptions);
  if (parsed.ok) throw new Error(`expected ${input} to be refused, got ${JSON.stringify(parsed.spec)}`);
  return parsed.error;
}

function runsFrom(spec: ScheduleSpec, from: Date, count: number): string[] {
  const runs: string[] = [];
  let after = from;
  for (let index = 0; index < count; index++) {
    const run = nextRunAfter(spec, after);
    if (run === undefined) break;
    runs.push(run.toISOString());
    after = run;
  }
  return runs;
}

const cron = (expression: string, timezone = 'UTC'): ScheduleSpec => ({ kind: 'cron', expression, timezone });
const every = (seconds: number, timezone = 'UTC'): ScheduleSpec => ({ kind: 'every', seconds, anchor: ANCHOR, timezone });
const once = (at: string, timezone = 'UTC'): ScheduleSpec => ({ kind: 'once', at, timezone });

describe('parseSchedule: cron expressions', () => {
  it.each([
    ['0 9 * * 1-5 summarise PRs', cron('0 9 * * 1-5'), 'summarise PRs'],
    ['"0 9 * * MON-FRI" summarise PRs', cron('0 9 * * MON-FRI'), 'summarise PRs'],
    ['“0 9 * * *” smart quotes from a phone', cron('0 9 * * *'), 'smart quotes from a phone'],
    ['"0   9 * *  *"   spaced out', cron('0 9 * * *'), 'spaced out'],
    ['30 */2 1,15 * * twice a month', cron('30 */2 1,15 * *'), 'twice a month'],
    ['0 30 9 * * 1 six fields, seconds first', cron('0 30 9 * * 1'), 'six fields, seconds first'],
    ['"0 9 * * 1-5" 3 things, quoted so the 3 is not a sixth field', cron('0 9 * * 1-5'), '3 things, quoted so the 3 is not a sixth field'],
    ['"@weekly" tidy up', cron('@weekly'), 'tidy up'],
  ])('%s', (input, spec, task) => {
    expect(parseSchedule(input, options('UTC'))).toEqual({ ok: true, spec, task });
  });

  it('reads a cron in the person’s time zone', () => {
    expect(specOf('0 9 * * 1-5 x', options('Europe/Berlin'))).toEqual(cron('0 9 * * 1-5', 'Europe/Berlin'));
  });
});

describe('parseSchedule: recurring wall-clock phrases', () => {
  it.each([
    ['every weekday 09:00 summarise the open PRs', '0 9 * * MON-FRI', 'summarise the open PRs'],
    ['Every Weekday At 9AM Summarise', '0 9 * * MON-FRI', 'Summarise'],
    ['every weekdays 8 x', '0 8 * * MON-FRI', 'x'],
    ['every day at 21:00 x', '0 21 * * *', 'x'],
    ['every day x', '0 9 * * *', 'x'],
    ['daily 7:30 x', '30 7 * * *', 'x'],
    ['daily at noon x', '0 12 * * *', 'x'],
    ['every weekend x', '0 9 * * SAT,SUN', 'x'],
    ['every weekends at 10 x', '0 10 * * SAT,SUN', 'x'],
    ['every monday at 9:30pm x', '30 21 * * MON', 'x'],
    ['every mon x', '0 9 * * MON', 'x'],
    ['every mondays 8 x', '0 8 * * MON', 'x'],
    ['every tues x', '0 9 * * TUE', 'x'],
    ['every thurs x', '0 9 * * THU', 'x'],
    ['every mon,wed,fri at 9 standup notes', '0 9 * * MON,WED,FRI', 'standup notes'],
    ['every fri, tue and thursday 10:15 x', '15 10 * * TUE,THU,FRI', 'x'],
    ['every mondays and fridays 6pm x', '0 18 * * MON,FRI', 'x'],
    ['every sunday,saturday 12pm x', '0 12 * * SAT,SUN', 'x'],
    ['every mon,tue,wed,thu,fri,sat,sun x', '0 9 * * *', 'x'],
    ['every hour x', '0 * * * *', 'x'],
    ['hourly x', '0 * * * *', 'x'],
    ['every minute x', '* * * * *', 'x'],
  ])('%s', (input, expression, task) => {
    expect(parseSchedule(input, options('Europe/Berlin'))).toEqual({ ok: true, spec: cron(expression, 'Europe/Berlin'), task });
  });

  it.each([
    ['9', '0 9'],
    ['9:30', '30 9'],
    ['09:00', '0 9'],
    ['21:00', '0 21'],
    ['0:05', '5 0'],
    ['9am', '0 9'],
    ['9:30pm', '30 21'],
    ['9 PM', '0 21'],
    ['12am', '0 0'],
    ['12:45am', '45 0'],
    ['12pm', '0 12'],
    ['noon', '0 12'],
    ['midnight', '0 0'],
  ])('reads the time %s', (time, minuteAndHour) => {
    expect(specOf(`every day at ${time} x`, options('UTC'))).toEqual(cron(`${minuteAndHour} * * *`));
  });

  it('keeps a task that only starts like a time word', () => {
    const parsed = parseSchedule('every day at 9 amazing things', options('UTC'));
    expect(parsed).toEqual({ ok: true, spec: cron('0 9 * * *'), task: 'amazing things' });
  });

  it('trims the task and keeps its lines', () => {
    expect(parseSchedule('  every day 9\n  line one\nline two  ', options('UTC'))).toEqual({
      ok: true,
      spec: cron('0 9 * * *'),
      task: 'line one\nline two',
    });
  });
});

describe('parseSchedule: intervals', () => {
  it.each([
    ['every 30 minutes x', 1800],
    ['every 1 minute x', 60],
    ['every 45 mins x', 2700],
    ['every 10 min x', 600],
    ['every 30m x', 1800],
    ['every 2 hours x', 7200],
    ['every 1 hour x', 3600],
    ['every 3 hrs x', 10_800],
    ['every 2 h x', 7200],
    ['every 2h x', 7200],
    ['every 2 days x', 172_800],
    ['every 2 weeks x', 1_209_600],
    ['EVERY 90 Minutes x', 5400],
  ])('%s', (input, seconds) => {
    expect(parseSchedule(input, options('Europe/Berlin'))).toEqual({ ok: true, spec: every(seconds, 'Europe/Berlin'), task: 'x' });
  });

  it.each([
    ['every 2 seconds x', 2],
    ['every 5 secs x', 5],
    ['every 2s x', 2],
  ])('%s, with a minimum of one second', (input, seconds) => {
    expect(specOf(input, options('UTC', { minIntervalSeconds: 1 }))).toEqual(every(seconds));
  });
});

describe('parseSchedule: one-off times', () => {
  it.each([
    ['in 2 hours x', 'UTC', '2026-12-04T12:00:00.000Z'],
    ['in 2h x', 'UTC', '2026-12-04T12:00:00.000Z'],
    ['in 30 minutes x', 'UTC', '2026-12-04T10:30:00.000Z'],
    ['in 30m x', 'UTC', '2026-12-04T10:30:00.000Z'],
    ['in 90s x', 'UTC', '2026-12-04T10:01:30.000Z'],
    ['in 3 days x', 'Europe/Berlin', '2026-12-07T10:00:00.000Z'],
    ['in an hour x', 'UTC', '2026-12-04T11:00:00.000Z'],
    ['in 1 week x', 'UTC', '2026-12-11T10:00:00.000Z'],
    ['in 366 days x', 'UTC', '2027-12-05T10:00:00.000Z'],
    ['today at 21:00 x', 'UTC', '2026-12-04T21:00:00.000Z'],
    ['today 21:00 x', 'Europe/Berlin', '2026-12-04T20:00:00.000Z'],
    ['tomorrow x', 'UTC', '2026-12-05T09:00:00.000Z'],
    ['tomorrow x', 'Europe/Berlin', '2026-12-05T08:00:00.000Z'],
    ['tomorrow at 8:30 x', 'Europe/Berlin', '2026-12-05T07:30:00.000Z'],
    ['Tomorrow 8:30pm x', 'UTC', '2026-12-05T20:30:00.000Z'],
    // `at`: today while the time is ahead, else tomorrow; the very minute of now has passed.
    ['at 11:30 x', 'UTC', '2026-12-04T11:30:00.000Z'],
    ['at 9 x', 'UTC', '2026-12-05T09:00:00.000Z'],
    ['at 11:30 x', 'Europe/Berlin', '2026-12-04T10:30:00.000Z'],
    ['at 11 x', 'Europe/Berlin', '2026-12-05T10:00:00.000Z'],
    // `on <day>`: the soonest such day whose time is still ahead; today is a Friday.
    ['on monday x', 'UTC', '2026-12-07T09:00:00.000Z'],
    ['on mon at 8am x', 'Europe/Berlin', '2026-12-07T07:00:00.000Z'],
    ['on friday at 5pm x', 'UTC', '2026-12-04T17:00:00.000Z'],
    ['on fri 9 x', 'UTC', '2026-12-11T09:00:00.000Z'],
    ['on friday 10:00 x', 'UTC', '2026-12-11T10:00:00.000Z'],
    ['on sat at midnight x', 'UTC', '2026-12-05T00:00:00.000Z'],
    ['on thursday noon x', 'UTC', '2026-12-10T12:00:00.000Z'],
    ['on 2026-12-24 at 9:30pm x', 'Europe/Berlin', '2026-12-24T20:30:00.000Z'],
    ['on 2027-01-15 x', 'UTC', '2027-01-15T09:00:00.000Z'],
    ['2026-12-24 08:30 x', 'UTC', '2026-12-24T08:30:00.000Z'],
    ['2026-12-24 at 08:30 x', 'Europe/Berlin', '2026-12-24T07:30:00.000Z'],
  ])('%s (%s)', (input, timezone, at) => {
    expect(parseSchedule(input, options(timezone))).toEqual({ ok: true, spec: once(at, timezone), task: 'x' });
  });
});

describe('parseSchedule: refusals', () => {
  const unrecognised =
    'I could not tell when to run that. Start with the when, then the task, like `every weekday 09:00 summarise the open PRs`, ' +
    '`in 2h check the deploy`, `tomorrow 8:30 send the report` or a cron expression such as `0 9 * * 1-5 summarise the open PRs`.';
  const onceAMinute = 'That runs too often: here a schedule may run at most once a minute. Pick a longer interval, like `every minute`.';
  const timeHelp = 'Write times like 9:30, 21:00 or 9pm.';
  const cronHelp = 'Use five fields, minute hour day-of-month month day-of-week, like `0 9 * * 1-5`.';
  const addTask = 'but not what to do. Add the task after the when, like `every weekday 09:00 summarise the open PRs`.';

  it.each([
    ['hello world', unrecognised],
    ['', unrecognised],
    ['every fortnight x', unrecognised],
    ['next week x', unrecognised],
    ['every weekday 09:00', `I know when (every weekday at 09:00) ${addTask}`],
    ['in 2h   ', `I know when (once, Fri 4 Dec 2026 12:00) ${addTask}`],
    ['every 30s x', onceAMinute],
    ['every 59 seconds x', onceAMinute],
    ['every 0 minutes x', onceAMinute],
    ['"*/30 * * * * *" x', onceAMinute],
    ['"0,30 * * * * *" x', onceAMinute],
    ['every 367 days x', 'That interval is longer than a year. Pick at most 366 days, like `every 30 days`.'],
    ['in 0 minutes x', 'Fri 4 Dec 2026, 10:00 (UTC) is not in the future. Pick a later time, like `in 2h` or `tomorrow 9:00`.'],
    ['today 9 x', 'Fri 4 Dec 2026, 09:00 (UTC) is not in the future. Pick a later time, like `in 2h` or `tomorrow 9:00`.'],
    ['on 2026-12-01 x', 'Tue 1 Dec 2026, 09:00 (UTC) is not in the future. Pick a later time, like `in 2h` or `tomorrow 9:00`.'],
    ['in 367 days x', 'That is more than 366 days ahead. Pick a time within the next year.'],
    ['on 2027-12-06 x', 'That is more than 366 days ahead. Pick a time within the next year.'],
    ['in 99999999999999999999999 hours x', 'That is more than 366 days ahead. Pick a time within the next year.'],
    ['0 9 * * 8 x', `\`0 9 * * 8\` is not a valid cron expression (Invalid value for dayOfWeek: 8). ${cronHelp}`],
    ['"61 * * * *" x', `\`61 * * * *\` is not a valid cron expression (Invalid value for minute: 61). ${cronHelp}`],
    ['"0 9 * *" x', `\`0 9 * *\` is not a valid cron expression (it has 4 fields, not 5 or 6). ${cronHelp}`],
    ['"0 0 0 1 1 * 2027" x', `\`0 0 0 1 1 * 2027\` is not a valid cron expression (it has 7 fields, not 5 or 6). ${cronHelp}`],
    [
      '"0 0 30 2 *" x',
      'The cron expression `0 0 30 2 *` never matches a real date, so it would never run. ' +
        'Check its day and month, like `0 9 1 * *` for every 1st.',
    ],
    ['every day 25:00 x', `\`25:00\` is not a time of day. ${timeHelp}`],
    ['at 9:75 x', `\`9:75\` is not a time of day. ${timeHelp}`],
    ['tomorrow 13pm x', `\`13pm\` is not a time of day. ${timeHelp}`],
    ['tomorrow 0am x', `\`0am\` is not a time of day. ${timeHelp}`],
    ['every day 9:5 x', `\`9:5\` is not a time of day. ${timeHelp}`],
    ['every day at x', 'After `at`, write a time of day, like 9:30, 21:00 or 9pm.'],
    ['at the office x', 'After `at`, write a time of day, like 9:30, 21:00 or 9pm.'],
    ['on 2026-02-30 x', '`2026-02-30` is not a date on the calendar. Write dates as YYYY-MM-DD, like 2026-12-24.'],
  ])('%j', (input, error) => {
    expect(parseSchedule(input, options('UTC'))).toEqual({ ok: false, error });
  });

  it('refuses a time zone Intl does not know', () => {
    expect(errorOf('in 2h x', options('Mars/Olympus'))).toBe(
      '`Mars/Olympus` is not a time zone I know. Use an IANA name, like Europe/Berlin or UTC.',
    );
  });

  it(`keeps a task of ${MAX_TASK_CHARS} characters, counting emoji as one, and refuses one more`, () => {
    expect(parseSchedule(`in 2h ${'a'.repeat(MAX_TASK_CHARS)}`, options('UTC')).ok).toBe(true);
    expect(parseSchedule(`in 2h ${'🦌'.repeat(MAX_TASK_CHARS)}`, options('UTC')).ok).toBe(true);
    const tooLong = errorOf(`in 2h ${'a'.repeat(MAX_TASK_CHARS + 1)}`, options('UTC'));
    expect(tooLong).toBe('That task is too long. Shorten it to at most 2000 characters.');
  });
});

describe('parseSchedule: the operator’s minimum interval', () => {
  it.each([
    [60, 'every 1 minute x'],
    [60, 'every 60s x'],
    [60, 'every minute x'],
    [60, '* * * * * x'],
    [60, '"0 * * * * *" x'],
    [300, 'every 5 minutes x'],
    [300, '*/5 * * * * x'],
    [3600, 'hourly x'],
    [1, 'every 1s x'],
    [1, '"* * * * * *" x'],
  ])('allows exactly the minimum of %i seconds: %s', (minIntervalSeconds, input) => {
    expect(parseSchedule(input, options('UTC', { minIntervalSeconds })).ok).toBe(true);
  });

  it.each([
    [300, 'every 4 minutes x', 'at most once every 5 minutes', 'every 5 minutes'],
    [300, 'every minute x', 'at most once every 5 minutes', 'every 5 minutes'],
    [300, '*/4 * * * * x', 'at most once every 5 minutes', 'every 5 minutes'],
    [300, '"0,1 9 * * *" x', 'at most once every 5 minutes', 'every 5 minutes'],
    [3600, 'every 30m x', 'at most once an hour', 'every hour'],
    [7200, 'hourly x', 'at most once every 2 hours', 'every 2 hours'],
    [90, 'every minute x', 'at most once every 90 seconds', 'every 90 seconds'],
    [86_400, 'every 23 hours x', 'at most once a day', 'every day'],
    [2, 'every 1s x', 'at most once every 2 seconds', 'every 2 seconds'],
    [0, 'every 0s x', 'at most once a second', 'every second'],
  ])('with %i seconds refuses %s', (minIntervalSeconds, input, limit, example) => {
    expect(errorOf(input, options('UTC', { minIntervalSeconds }))).toBe(
      `That runs too often: here a schedule may run ${limit}. Pick a longer interval, like \`${example}\`.`,
    );
  });

  it('looks at the gaps between runs, not at how soon the first one is', () => {
    // The first run is a second away; the runs themselves are an hour apart.
    const oneSecondBefore = new Date('2026-12-04T10:59:59Z');
    expect(parseSchedule('hourly x', { now: oneSecondBefore, timezone: 'UTC', minIntervalSeconds: 3600 }).ok).toBe(true);
  });

  it('counts real time across the night the clocks go back: an hourly cron stays an hour apart', () => {
    const beforeFallBack = new Date('2026-10-24T23:30:00Z');
    expect(parseSchedule('hourly x', { now: beforeFallBack, timezone: 'Europe/Berlin', minIntervalSeconds: 3600 }).ok).toBe(true);
  });
});

describe('nextRunAfter', () => {
  it.each([
    ['every weekday 09:00 x', 'Europe/Berlin', ['2026-12-07T08:00:00.000Z', '2026-12-08T08:00:00.000Z', '2026-12-09T08:00:00.000Z']],
    ['every weekend x', 'UTC', ['2026-12-05T09:00:00.000Z', '2026-12-06T09:00:00.000Z', '2026-12-12T09:00:00.000Z']],
    ['every mon,wed,fri at 9 x', 'UTC', ['2026-12-07T09:00:00.000Z', '2026-12-09T09:00:00.000Z', '2026-12-11T09:00:00.000Z']],
    // Now is 10:00 on a Friday exactly: strictly after, so not now.
    ['every friday at 10 x', 'UTC', ['2026-12-11T10:00:00.000Z', '2026-12-18T10:00:00.000Z', '2026-12-25T10:00:00.000Z']],
    ['daily at 12am x', 'Europe/Berlin', ['2026-12-04T23:00:00.000Z', '2026-12-05T23:00:00.000Z', '2026-12-06T23:00:00.000Z']],
    ['hourly x', 'Europe/Berlin', ['2026-12-04T11:00:00.000Z', '2026-12-04T12:00:00.000Z', '2026-12-04T13:00:00.000Z']],
    ['every minute x', 'UTC', ['2026-12-04T10:01:00.000Z', '2026-12-04T10:02:00.000Z', '2026-12-04T10:03:00.000Z']],
    ['0 9 * * 1-5 x', 'UTC', ['2026-12-07T09:00:00.000Z', '2026-12-08T09:00:00.000Z', '2026-12-09T09:00:00.000Z']],
    ['"0 30 9 * * *" x', 'Europe/Berlin', ['2026-12-05T08:30:00.000Z', '2026-12-06T08:30:00.000Z', '2026-12-07T08:30:00.000Z']],
    ['every 2 hours x', 'Europe/Berlin', ['2026-12-04T12:00:00.000Z', '2026-12-04T14:00:00.000Z', '2026-12-04T16:00:00.000Z']],
    ['every 45m x', 'UTC', ['2026-12-04T10:45:00.000Z', '2026-12-04T11:30:00.000Z', '2026-12-04T12:15:00.000Z']],
    ['in 2h x', 'UTC', ['2026-12-04T12:00:00.000Z']],
    ['tomorrow 8:30 x', 'Europe/Berlin', ['2026-12-05T07:30:00.000Z']],
  ])('%s (%s)', (input, timezone, runs) => {
    expect(runsFrom(specOf(input, options(timezone)), NOW, 3)).toEqual(runs);
  });

  it.each([
    ['at the anchor itself', '2026-12-04T10:00:00.000Z', '2026-12-04T11:00:00.000Z'],
    ['before the anchor', '2026-12-04T08:00:00.000Z', '2026-12-04T11:00:00.000Z'],
    ['between two runs', '2026-12-04T10:30:00.000Z', '2026-12-04T11:00:00.000Z'],
    ['exactly on a run', '2026-12-04T11:00:00.000Z', '2026-12-04T12:00:00.000Z'],
    ['a millisecond before a run', '2026-12-04T11:59:59.999Z', '2026-12-04T12:00:00.000Z'],
    ['days later, still on the grid', '2026-12-09T13:20:00.000Z', '2026-12-09T14:00:00.000Z'],
  ])('every hour from the anchor, %s', (_case, after, next) => {
    expect(nextRunAfter(every(3600), new Date(after))?.toISOString()).toBe(next);
  });

  it.each([
    ['before it', '2026-12-04T11:59:59.000Z', '2026-12-04T12:00:00.000Z'],
    ['at it', '2026-12-04T12:00:00.000Z', undefined],
    ['after it', '2026-12-05T00:00:00.000Z', undefined],
  ])('a one-off, %s', (_case, after, next) => {
    expect(nextRunAfter(once('2026-12-04T12:00:00.000Z'), new Date(after))?.toISOString()).toBe(next);
  });

  it.each([
    ['exactly on a run', '2026-12-07T09:00:00.000Z', '2026-12-08T09:00:00.000Z'],
    ['half a second after a run', '2026-12-07T09:00:00.500Z', '2026-12-08T09:00:00.000Z'],
    ['half a second before a run', '2026-12-07T08:59:59.500Z', '2026-12-07T09:00:00.000Z'],
  ])('a cron, %s', (_case, after, next) => {
    expect(nextRunAfter(cron('0 9 * * MON-FRI'), new Date(after))?.toISOString()).toBe(next);
  });
});

describe('daylight saving time', () => {
  const berlin = (now: string): ParseOptions => ({ now: new Date(now), timezone: 'Europe/Berlin', minIntervalSeconds: 60 });

  it('runs a daily time the clock skips (02:30 on 29 March 2026) when the clock jumps to 03:00, then at 02:30 again', () => {
    const spec = specOf('every day at 2:30 x', berlin('2026-03-28T12:00:00Z'));
    expect(runsFrom(spec, new Date('2026-03-28T12:00:00Z'), 3)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
    expect(formatRunTime(new Date('2026-03-29T01:00:00.000Z'), 'Europe/Berlin')).toBe('Sun 29 Mar 2026, 03:00 (Europe/Berlin)');
  });

  it('runs a one-off at a skipped time the same way', () => {
    expect(specOf('tomorrow 2:30 x', berlin('2026-03-28T12:00:00Z'))).toEqual(once('2026-03-29T01:00:00.000Z', 'Europe/Berlin'));
    expect(specOf('on 2026-03-29 at 2:30 x', berlin('2026-03-01T12:00:00Z'))).toEqual(once('2026-03-29T01:00:00.000Z', 'Europe/Berlin'));
  });

  it('runs a time that happens twice (02:30 on 25 October 2026) once, at its first occurrence', () => {
    expect(specOf('on 2026-10-25 at 2:30 x', berlin('2026-10-20T12:00:00Z'))).toEqual(once('2026-10-25T00:30:00.000Z', 'Europe/Berlin'));
    const spec = specOf('every day at 2:30 x', berlin('2026-10-24T12:00:00Z'));
    expect(runsFrom(spec, new Date('2026-10-24T12:00:00Z'), 2)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('keeps a daily time on the wall clock as the offset changes', () => {
    const spec = specOf('every day at 9 x', berlin('2026-03-27T12:00:00Z'));
    expect(runsFrom(spec, new Date('2026-03-27T12:00:00Z'), 3)).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
  });

  it('keeps a daily time in New York across its spring forward (14 March 2027)', () => {
    const friday = new Date('2027-03-12T20:00:00Z');
    const spec = specOf('every day 9am x', { now: friday, timezone: 'America/New_York', minIntervalSeconds: 60 });
    expect(runsFrom(spec, friday, 3)).toEqual(['2027-03-13T14:00:00.000Z', '2027-03-14T13:00:00.000Z', '2027-03-15T13:00:00.000Z']);
  });

  it('keeps an interval in real time: every hour stays 60 minutes apart through the gap', () => {
    const spec: ScheduleSpec = { kind: 'every', seconds: 3600, anchor: '2026-03-29T00:30:00.000Z', timezone: 'Europe/Berlin' };
    expect(runsFrom(spec, new Date('2026-03-29T00:30:00.000Z'), 2)).toEqual(['2026-03-29T01:30:00.000Z', '2026-03-29T02:30:00.000Z']);
  });
});

describe('describeSchedule', () => {
  it.each([
    [cron('0 9 * * MON-FRI'), 'every weekday at 09:00'],
    [cron('30 21 * * MON,WED,FRI'), 'every Monday, Wednesday and Friday at 21:30'],
    [cron('0 9 * * TUE,THU'), 'every Tuesday and Thursday at 09:00'],
    [cron('0 7 * * SUN'), 'every Sunday at 07:00'],
    [cron('0 9 * * SAT,SUN'), 'every weekend at 09:00'],
    [cron('5 0 * * *'), 'every day at 00:05'],
    [cron('0 * * * *'), 'every hour'],
    [cron('* * * * *'), 'every minute'],
    [cron('0 9 * * 1-5'), 'cron 0 9 * * 1-5'],
    [cron('*/15 9-17 * * 1-5'), 'cron */15 9-17 * * 1-5'],
    [cron('0 0 9 * * *'), 'cron 0 0 9 * * *'],
    [cron('0 9 * * FOO'), 'cron 0 9 * * FOO'],
    [every(7200), 'every 2 hours'],
    [every(3600), 'every hour'],
    [every(60), 'every minute'],
    [every(90), 'every 90 seconds'],
    [every(5400), 'every 90 minutes'],
    [every(1), 'every second'],
    [every(86_400), 'every day'],
    [every(172_800), 'every 2 days'],
    [every(604_800), 'every week'],
    [once('2026-12-11T07:30:00.000Z', 'Europe/Berlin'), 'once, Fri 11 Dec 2026 08:30'],
    [once('2026-12-11T07:30:00.000Z'), 'once, Fri 11 Dec 2026 07:30'],
  ])('%j', (spec, words) => {
    expect(describeSchedule(spec)).toBe(words);
  });

  it.each([
    ['every mon,wed,fri at 9 x', 'every Monday, Wednesday and Friday at 09:00'],
    ['every weekday 9:30pm x', 'every weekday at 21:30'],
    ['every saturday and sunday x', 'every weekend at 09:00'],
    ['daily x', 'every day at 09:00'],
    ['hourly x', 'every hour'],
    ['every 30m x', 'every 30 minutes'],
    ['0 9 * * 1-5 x', 'cron 0 9 * * 1-5'],
    ['tomorrow 8:30 x', 'once, Sat 5 Dec 2026 08:30'],
  ])('reads back what %s made', (input, words) => {
    expect(describeSchedule(specOf(input, options('Europe/Berlin')))).toBe(words);
  });
});

describe('formatRunTime', () => {
  it.each([
    ['2026-12-07T08:00:00Z', 'Europe/Berlin', 'Mon 7 Dec 2026, 09:00 (Europe/Berlin)'],
    ['2026-12-07T08:00:00Z', 'UTC', 'Mon 7 Dec 2026, 08:00 (UTC)'],
    ['2026-12-04T23:30:00Z', 'Europe/Berlin', 'Sat 5 Dec 2026, 00:30 (Europe/Berlin)'],
    ['2026-07-01T12:00:00Z', 'America/New_York', 'Wed 1 Jul 2026, 08:00 (America/New_York)'],
    ['2026-12-04T10:00:00Z', 'Asia/Kolkata', 'Fri 4 Dec 2026, 15:30 (Asia/Kolkata)'],
    ['2026-12-04T21:05:59Z', 'UTC', 'Fri 4 Dec 2026, 21:05 (UTC)'],
  ])('%s in %s', (instant, timezone, text) => {
    expect(formatRunTime(new Date(instant), timezone)).toBe(text);
  });
});

describe('isValidTimeZone', () => {
  it.each([
    ['Europe/Berlin', true],
    ['UTC', true],
    ['America/New_York', true],
    ['Mars/Olympus', false],
    ['', false],
    ['Europe/Berlin; drop table', false],
  ])('%j is %s', (name, valid) => {
    expect(isValidTimeZone(name)).toBe(valid);
  });
});

describe('purity', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts no timers and reads no clock: the same input and options give the same answer at any real time', () => {
    vi.useFakeTimers({ now: new Date('2031-01-01T00:00:00Z') });
    const parsed = parseSchedule('every weekday 09:00 x', options('Europe/Berlin'));
    expect(parsed).toEqual({ ok: true, spec: cron('0 9 * * MON-FRI', 'Europe/Berlin'), task: 'x' });
    expect(nextRunAfter(cron('0 9 * * MON-FRI', 'Europe/Berlin'), NOW)?.toISOString()).toBe('2026-12-07T08:00:00.000Z');
    expect(specOf('tomorrow x', options('UTC'))).toEqual(once('2026-12-05T09:00:00.000Z'));
    expect(vi.getTimerCount()).toBe(0);
  });
});
