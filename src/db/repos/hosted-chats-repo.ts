import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { HostedChats, HostedConversation, HostedMessage } from '../../channel/hosted-chats.js';
import type { Database } from '../index.js';
import { hostedConversations, hostedFiles, hostedMessages } from '../schema/index.js';
import { jsonbSafe } from './follow-ups-repo.js';

type ConversationRow = typeof hostedConversations.$inferSelect;
type MessageRow = typeof hostedMessages.$inferSelect;

const toConversation = (row: ConversationRow): HostedConversation => ({
  id: row.id,
  ownerUserId: row.ownerUserId ?? undefined,
  title: row.title,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const toMessage = (row: MessageRow): HostedMessage => ({
  id: row.id,
  conversationId: row.conversationId,
  author: row.author,
  text: row.text,
  files: row.files,
  isFinal: row.isFinal,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

/** Text as PostgreSQL keeps it: no NUL characters, no lone surrogates. */
const storable = (text: string): string => jsonbSafe(text) as string;

/** Hosted chats (`ChannelDeps.hostedChats`), per platform. */
export class HostedChatsRepo {
  constructor(private readonly db: Database) {}

  /** One platform's view: conversations of other platforms are not found through it. */
  forPlatform(platform: string): HostedChats {
    const db = this.db;
    const ownConversation = (id: string) => and(eq(hostedConversations.id, id), eq(hostedConversations.platform, platform));
    const isOwn = async (conversationId: string) =>
      (await db.select({ id: hostedConversations.id }).from(hostedConversations).where(ownConversation(conversationId))).length > 0;
    return {
      async createConversation({ ownerUserId, title }) {
        const [row] = await db
          .insert(hostedConversations)
          .values({ id: randomUUID(), platform, ownerUserId: ownerUserId ?? null, title: storable(title) })
          .returning();
        return toConversation(row as ConversationRow);
      },
      async conversation(id) {
        const [row] = await db.select().from(hostedConversations).where(ownConversation(id));
        return row && toConversation(row);
      },
      async conversations(ownerUserId, limit) {
        const owner = ownerUserId === undefined ? isNull(hostedConversations.ownerUserId) : eq(hostedConversations.ownerUserId, ownerUserId);
        const rows = await db
          .select()
          .from(hostedConversations)
          .where(and(eq(hostedConversations.platform, platform), owner))
          .orderBy(desc(hostedConversations.updatedAt))
          .limit(limit);
        return rows.map(toConversation);
      },
      async deleteConversation(id) {
        return (await db.delete(hostedConversations).where(ownConversation(id)).returning({ id: hostedConversations.id })).length > 0;
      },
      async addMessage(conversationId, message) {
        return db.transaction(async (tx) => {
          const [row] = await tx
            .insert(hostedMessages)
            .values({ conversationId, author: message.author, text: storable(message.text), files: message.files ?? [], isFinal: message.isFinal })
            .returning();
          await tx.update(hostedConversations).set({ updatedAt: sql`now()` }).where(ownConversation(conversationId));
          return toMessage(row as MessageRow);
        });
      },
      async replaceMessage(id, update) {
        const [row] = await db
          .update(hostedMessages)
          .set({ text: storable(update.text), isFinal: update.isFinal, updatedAt: sql`now()` })
          .where(eq(hostedMessages.id, id))
          .returning();
        return row && toMessage(row);
      },
      async deleteMessages(conversationId, ids) {
        if (ids.length === 0) return;
        await db.delete(hostedMessages).where(and(eq(hostedMessages.conversationId, conversationId), inArray(hostedMessages.id, [...ids])));
      },
      async messages(conversationId, { afterId, limit }) {
        if (!(await isOwn(conversationId))) return [];
        const rows = await db
          .select()
          .from(hostedMessages)
          .where(and(eq(hostedMessages.conversationId, conversationId), afterId === undefined ? undefined : gt(hostedMessages.id, afterId)))
          .orderBy(asc(hostedMessages.id))
          .limit(limit);
        return rows.map(toMessage);
      },
      async putFile(conversationId, file) {
        const ref = { id: randomUUID(), name: storable(file.name), mimeType: file.mimeType, size: file.bytes.byteLength };
        await db.insert(hostedFiles).values({ ...ref, conversationId, bytes: file.bytes });
        return ref;
      },
      async fileRefs(conversationId, ids) {
        if (ids.length === 0 || !(await isOwn(conversationId))) return [];
        const rows = await db
          .select({ id: hostedFiles.id, name: hostedFiles.name, mimeType: hostedFiles.mimeType, size: hostedFiles.size })
          .from(hostedFiles)
          .where(and(eq(hostedFiles.conversationId, conversationId), inArray(hostedFiles.id, [...ids])));
        return ids.flatMap((id) => rows.filter((row) => row.id === id));
      },
      async file(conversationId, id) {
        if (!(await isOwn(conversationId))) return undefined;
        const [row] = await db
          .select()
          .from(hostedFiles)
          .where(and(eq(hostedFiles.id, id), eq(hostedFiles.conversationId, conversationId)));
        return row && { id: row.id, name: row.name, mimeType: row.mimeType, size: row.size, bytes: row.bytes };
      },
    };
  }
}
