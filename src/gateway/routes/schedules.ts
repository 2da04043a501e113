import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import type { ScheduleBook, ScheduleChange } from '../../schedules/book.js';
import type { ScheduleRecord } from '../../schedules/types.js';
import { describeSchedule } from '../../schedules/when.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const scheduleSchema = z.object({
  id: z.string(),
  owner_user_id: z.string(),
  channel: z.string(),
  chat_id: z.string(),
  topic_id: z.string().nullable(),
  /** The task is its owner's words: only they see it; the operator gets its length. */
  task: z.string().optional(),
  task_chars: z.number().int(),
  when: z.string(),
  timezone: z.string(),
  missed: z.enum(['run_once', 'skip']),
  state: z.enum(['active', 'paused', 'done', 'cancelled']),
  next_run_at: z.string().nullable(),
  last_run_at: z.string().nullable(),
  created_at: z.string(),
});

const idParamsSchema = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9]{1,32}$/, 'a schedule id such as k3x9qa') });
const scheduleResponse = { 200: z.object({ schedule: scheduleSchema }), ...errorResponses };

/**
 * Whose schedules a request may see and change: a signed-in user their own; the operator, and the
 * caller of a single-user server without keys, everyone's (undefined).
 */
function ownerOf(request: FastifyRequest): string | undefined {
  return request.principal?.kind === 'user' ? request.principal.user.id : undefined;
}

function toJson(schedule: ScheduleRecord, isOwnersView: boolean): z.infer<typeof scheduleSchema> {
  return {
    id: schedule.id,
    owner_user_id: schedule.ownerUserId,
    channel: schedule.origin.channel,
    chat_id: schedule.origin.chatId,
    topic_id: schedule.origin.topicId ?? null,
    ...(isOwnersView ? { task: schedule.task } : {}),
    task_chars: schedule.task.length,
    when: describeSchedule(schedule.spec),
    timezone: schedule.spec.timezone,
    missed: schedule.missed,
    state: schedule.state,
    next_run_at: schedule.nextRunAt?.toISOString() ?? null,
    last_run_at: schedule.lastRunAt?.toISOString() ?? null,
    created_at: schedule.createdAt.toISOString(),
  };
}

/**
 * `/schedules` (at `/api`): the schedules people made in chat (`/schedule`, `schedule_task`),
 * listed, paused, resumed, cancelled and told what to do with missed runs, each only by its owner
 * or the operator; another's schedule is a 404, as if it did not exist. Schedules are made in a
 * chat, never here: only a message from a chat proves its sender may post there and says how.
 */
export const scheduleRoutes: ZodPluginAsync<{ schedules: ScheduleBook }> = async (app, { schedules }) => {
  /** The schedule as the caller may see it, or 404. */
  const answer = (request: FastifyRequest, change: ScheduleChange) => {
    if (!change.ok) throw new NotFoundError('Schedule');
    return { schedule: toJson(change.schedule, isOwnersView(request)) };
  };

  app.get(
    '/schedules',
    {
      schema: {
        querystring: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
        response: { 200: z.object({ schedules: z.array(scheduleSchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const found = await schedules.listAll(ownerOf(request), request.query.limit);
      return { schedules: found.map((schedule) => toJson(schedule, isOwnersView(request))) };
    },
  );

  app.get('/schedules/:id', { schema: { params: idParamsSchema, response: scheduleResponse } }, async (request) => {
    const schedule = await schedules.get(ownerOf(request), request.params.id);
    return answer(request, schedule === undefined ? { ok: false, reason: 'not_found' } : { ok: true, schedule });
  });

  app.post('/schedules/:id/pause', { schema: { params: idParamsSchema, response: scheduleResponse } }, async (request) =>
    answer(request, await schedules.pause(ownerOf(request), request.params.id)),
  );

  app.post('/schedules/:id/resume', { schema: { params: idParamsSchema, response: scheduleResponse } }, async (request) =>
    answer(request, await schedules.resume(ownerOf(request), request.params.id)),
  );

  app.patch(
    '/schedules/:id',
    { schema: { params: idParamsSchema, body: z.strictObject({ missed: z.enum(['run_once', 'skip']) }), response: scheduleResponse } },
    async (request) => answer(request, await schedules.setMissed(ownerOf(request), request.params.id, request.body.missed)),
  );

  app.delete('/schedules/:id', { schema: { params: idParamsSchema, response: scheduleResponse } }, async (request) =>
    answer(request, await schedules.cancel(ownerOf(request), request.params.id)),
  );
};

/** The operator sees a schedule's shape, not its words; its owner (or a single-user server's caller) sees both. */
function isOwnersView(request: FastifyRequest): boolean {
  return request.principal?.kind !== 'operator';
}
