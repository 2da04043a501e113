import type { InboundMessage } from '../channel/types.js';
import type { ScheduleSpec } from './when.js';

/** What a schedule keeps of the message that made it: who asked, where to answer, how they were trusted. */
export type ScheduleOrigin = Pick<
  InboundMessage,
  'channel' | 'chatId' | 'topicId' | 'userId' | 'workspaceId' | 'isPrivateChat' | 'senderIsAllowlisted' | 'platformData' | 'agentName'
>;

export type ScheduleState = 'active' | 'paused' | 'done' | 'cancelled';

/** What a start does with occurrences that fell while no process ran: one run now, or none. */
export type MissedPolicy = 'run_once' | 'skip';

/** One schedule as stored (`schedules` table). */
export interface ScheduleRecord {
  /** Short and typed by people (`/schedule cancel k3x9qa`). */
  id: string;
  /** The storage user its runs are for; only they, or the operator, see and change it. */
  ownerUserId: string;
  origin: ScheduleOrigin;
  /** Its own agent thread, apart from the chat's conversation. */
  threadId: string;
  task: string;
  spec: ScheduleSpec;
  missed: MissedPolicy;
  state: ScheduleState;
  /** The next occurrence; undefined once none is due (done, cancelled). */
  nextRunAt: Date | undefined;
  lastRunAt: Date | undefined;
  createdAt: Date;
}

/** A schedule about to be stored. */
export type NewSchedule = Omit<ScheduleRecord, 'state' | 'lastRunAt' | 'createdAt'>;

/** `context` key of a chat turn's run that names where a schedule it makes answers (`schedule_task`); only the manager sets it. */
export const SCHEDULE_ORIGIN_CONTEXT_KEY = 'schedule_origin';

/** `configurable` key under which the runtime hands `schedule_task` that chat. */
export const SCHEDULE_ORIGIN_KEY = 'deerflow_schedule_origin';

/** What a schedule keeps of `message`; `agentName` is the agent the conversation talks to now. */
export function scheduleOriginOf(message: InboundMessage, agentName: string | undefined): ScheduleOrigin {
  return {
    channel: message.channel,
    chatId: message.chatId,
    userId: message.userId,
    isPrivateChat: message.isPrivateChat,
    ...(message.topicId === undefined ? {} : { topicId: message.topicId }),
    ...(message.workspaceId === undefined ? {} : { workspaceId: message.workspaceId }),
    ...(message.senderIsAllowlisted === undefined ? {} : { senderIsAllowlisted: message.senderIsAllowlisted }),
    ...(message.platformData === undefined ? {} : { platformData: message.platformData }),
    ...(agentName === undefined ? {} : { agentName }),
  };
}
