import type { ScheduleChange } from '../../schedules/book.js';
import { createdText, nextRunText, SCHEDULE_MESSAGES } from '../../schedules/messages.js';
import { scheduleOriginOf } from '../../schedules/types.js';
import { describeSchedule } from '../../schedules/when.js';
import type { Command, CommandContext } from './types.js';

const ACTIONS = new Set(['pause', 'resume', 'cancel']);

/**
 * `/schedule <when> <task>` makes a schedule whose runs answer into this chat; `/schedule` or
 * `/schedule list` shows the sender's schedules made here; `/schedule pause|resume|cancel <id>`
 * changes one of theirs (issue #17).
 */
export const scheduleCommand: Command = {
  name: 'schedule',
  usage: '/schedule <when> <task> | list | cancel <id>',
  description: 'Run a task on a schedule and post the result here',
  async run(context) {
    const book = context.schedules;
    if (!book) return { reply: SCHEDULE_MESSAGES.disabled };
    const [first = '', ...rest] = context.args.split(/\s+/);
    const action = first.toLowerCase();
    // Failures propagate: the manager waits out a database outage, and logs and answers the rest.
    if (action === '' || action === 'list') return { reply: await listReply(context) };
    if (action === 'help') return { reply: SCHEDULE_MESSAGES.usage };
    if (action === 'timezone') return { reply: await timezoneReply(context, rest.join(' ').trim()) };
    if (ACTIONS.has(action)) {
      const id = rest.join(' ').trim();
      if (id === '') return { reply: SCHEDULE_MESSAGES.missingId(action) };
      const changed = await book[action as 'pause' | 'resume' | 'cancel'](context.userId, id);
      return { reply: changeReply(action, id, changed) };
    }
    const made = await book.create({ ownerUserId: context.userId, origin: scheduleOriginOf(context.message, context.currentAgent), text: context.args });
    if (!made.ok) return { reply: refusal(made, book.maxPerUser) };
    return { reply: createdText(made.schedule) };
  },
};

/** `/schedule timezone` shows the sender's zone; with a name, sets it. */
async function timezoneReply(context: CommandContext, zone: string): Promise<string> {
  const book = context.schedules as NonNullable<CommandContext['schedules']>;
  if (zone === '') {
    const { timezone, isChosen } = await book.timezoneOf(context.userId);
    return SCHEDULE_MESSAGES.timezone(timezone, isChosen);
  }
  if (!(await book.setTimezone(context.userId, zone))) return SCHEDULE_MESSAGES.timezoneUnknown(zone);
  return SCHEDULE_MESSAGES.timezoneSet((await book.timezoneOf(context.userId)).timezone);
}

async function listReply(context: CommandContext): Promise<string> {
  const schedules = await (context.schedules as NonNullable<CommandContext['schedules']>).list(context.userId, context.message);
  if (schedules.length === 0) return SCHEDULE_MESSAGES.none;
  const lines = schedules.map((schedule) =>
    SCHEDULE_MESSAGES.listLine(
      schedule.id,
      describeSchedule(schedule.spec),
      schedule.state === 'paused' ? SCHEDULE_MESSAGES.paused : SCHEDULE_MESSAGES.nextRun(nextRunText(schedule)),
      schedule.task,
    ),
  );
  return [SCHEDULE_MESSAGES.listHeader, ...lines].join('\n');
}

function changeReply(action: string, id: string, change: ScheduleChange): string {
  if (!change.ok) return SCHEDULE_MESSAGES.notFound(id);
  const { schedule } = change;
  if (action === 'pause') return SCHEDULE_MESSAGES.pausedOne(schedule.id);
  if (action === 'cancel') return SCHEDULE_MESSAGES.cancelledOne(schedule.id);
  return schedule.nextRunAt === undefined
    ? SCHEDULE_MESSAGES.resumedNothingLeft(schedule.id)
    : SCHEDULE_MESSAGES.resumedOne(schedule.id, nextRunText(schedule));
}

function refusal(change: Exclude<ScheduleChange, { ok: true }>, maxPerUser: number): string {
  if (change.reason === 'refused') return change.message;
  return change.reason === 'too_many' ? SCHEDULE_MESSAGES.tooMany(maxPerUser) : SCHEDULE_MESSAGES.usage;
}
