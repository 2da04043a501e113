import { sql } from 'drizzle-orm';
import { rowsOf } from '../driver-rows.js';
import type { Database } from '../index.js';

/** One conversation as the console lists it: where it is, who it is with, and its thread. */
export interface ConversationSummary {
  platform: string;
  chatId: string;
  /** '' when the conversation is the whole chat. */
  topicId: string;
  threadId: string;
  /** The chat's title where the server keeps one (hosted chats: the web chat); null elsewhere. */
  title: string | null;
  /** The account the thread belongs to (its name), or null for a sender without an account. */
  ownerName: string | null;
  /** The platform's id of the sender who started it (unbound chats) or of the bound identity. */
  senderId: string | null;
  /** The later of the last run's end and the mapping's last change. */
  lastActivityAt: string;
  /** Runs the thread has had (each is one turn or more of the conversation); 0 with a remote runtime. */
  runs: number;
  /** Opaque position of this row: pass it as `before` to read the page after it. */
  cursor: string;
}

/** A position in the list: microseconds since the epoch of the last activity, and the thread id that breaks ties. */
export interface ConversationCursor {
  activityMicros: bigint;
  threadId: string;
}

/** `<micros>_<thread id>`, as {@link ConversationSummary.cursor} writes it. */
const CURSOR = /^(\d{1,20})_([0-9a-f-]{36})$/;

/** Reads a cursor back, or undefined for text that is not one. */
export function parseConversationCursor(text: string): ConversationCursor | undefined {
  const match = CURSOR.exec(text);
  return match ? { activityMicros: BigInt(match[1] as string), threadId: match[2] as string } : undefined;
}

interface Row {
  platform: string;
  chat_id: string;
  topic_id: string;
  thread_id: string;
  title: string | null;
  owner_name: string | null;
  sender_id: string | null;
  last_activity_at: string;
  activity_micros: string;
  runs: number | string;
}

/**
 * Every conversation of every channel, newest activity first: the unbound chats of
 * `thread_mappings` and the bound people's of `channel_conversations`, each with its thread. A
 * thread belongs to the account its metadata names (`owner_user_id`, as the API's ownership check
 * reads it), else, when the runtime keeps its threads elsewhere, to the binding's owner.
 */
export class ConversationListRepo {
  constructor(private readonly db: Database) {}

  /**
   * One page of at most `limit` conversations after `before`; with `ownerUserId`, only those whose
   * thread belongs to that account.
   */
  async list(options: { limit: number; before?: ConversationCursor | undefined; ownerUserId?: string | undefined }): Promise<ConversationSummary[]> {
    const { limit, before, ownerUserId } = options;
    const owned = ownerUserId === undefined ? sql`true` : sql`r.owner_id = ${ownerUserId}`;
    const after =
      before === undefined ? sql`true` : sql`(r.activity_micros, r.thread_id::text) < (${before.activityMicros.toString()}::bigint, ${before.threadId})`;
    const result = await this.db.execute(sql`
      with convo as (
        select m.channel as platform, m.chat_id, m.topic_id, m.thread_id, m.user_id as sender_id,
               null::text as connection_owner, m.updated_at as mapped_at
        from thread_mappings m
        union all
        select c.provider, cc.chat_id, cc.topic_id, cc.thread_id, c.external_account_id,
               c.owner_user_id::text, cc.updated_at
        from channel_conversations cc join channel_connections c on c.id = cc.connection_id
      ), r as (
        select convo.*, coalesce(t.metadata->>'owner_user_id', convo.connection_owner) as owner_id,
               greatest(t.updated_at, convo.mapped_at) as last_activity,
               (extract(epoch from greatest(t.updated_at, convo.mapped_at)) * 1000000)::bigint as activity_micros
        from convo left join threads t on t.id = convo.thread_id
      )
      select r.platform, r.chat_id, r.topic_id, r.thread_id::text as thread_id, h.title, u.name as owner_name, r.sender_id,
             to_char(r.last_activity at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last_activity_at,
             r.activity_micros::text as activity_micros,
             (select count(*) from runs where runs.thread_id = r.thread_id)::int as runs
      from r
      left join users u on u.id::text = r.owner_id
      left join hosted_conversations h on h.platform = r.platform and h.id::text = r.chat_id
      where ${owned} and ${after}
      order by r.activity_micros desc, r.thread_id::text desc
      limit ${limit}`);
    return rowsOf<Row>(result).map((row) => ({
      platform: row.platform,
      chatId: row.chat_id,
      topicId: row.topic_id,
      threadId: row.thread_id,
      title: row.title === '' ? null : row.title,
      ownerName: row.owner_name,
      senderId: row.sender_id,
      lastActivityAt: row.last_activity_at,
      runs: Number(row.runs),
      cursor: `${row.activity_micros}_${row.thread_id}`,
    }));
  }
}
