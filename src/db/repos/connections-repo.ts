import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, getTableColumns, gte, lt, ne, sql } from 'drizzle-orm';
import { AppError } from '../../errors.js';
import { type Database, sqlState, UNIQUE_VIOLATION } from '../index.js';
import {
  type ConnectionEventKind,
  type ConnectionStatus,
  channelConnectionEvents,
  channelConnections,
  users,
} from '../schema/index.js';
import { isUuid } from './users-repo.js';

/** A chat account on a platform; `workspaceId` is '' when the platform has none. */
export interface ChannelIdentity {
  provider: string;
  externalAccountId: string;
  workspaceId: string;
}

/** One `channel_connections` row: a chat identity bound to a user. */
export interface ConnectionRecord {
  id: string;
  ownerUserId: string;
  provider: string;
  status: ConnectionStatus;
  externalAccountId: string;
  externalAccountName: string | null;
  workspaceId: string;
  workspaceName: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** A connected binding as the identity gate reads it: with its owner's shell grant and whether the owner is disabled. */
export interface ActiveConnection extends ConnectionRecord {
  ownerCanUseShell: boolean;
  isOwnerDisabled: boolean;
}

/** The events of a refused code attempt. */
export type CodeRefusalKind = Extract<ConnectionEventKind, `code_${string}`>;

/** One audit entry: a bind, a takeover, an unbind or a refused code attempt. Never holds a code. */
export interface ConnectionEvent {
  id: string;
  /** Insertion order; the audit API's cursor. */
  seq: number;
  kind: ConnectionEventKind;
  provider: string;
  externalAccountId: string;
  workspaceId: string;
  userId: string | null;
  connectionId: string | null;
  createdAt: Date;
}

/** Attempts of `bind` before a run of unique violations (concurrent writers) is given up (reference §8.3). */
const BIND_ATTEMPTS = 3;

type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/** Chat identities bound to users (reference §8.3), and the audit trail of those bindings. */
export class ConnectionsRepo {
  constructor(private readonly db: Database) {}

  /**
   * Binds the identity to `ownerUserId` with status `connected`. In one transaction: revokes every
   * other owner's non-revoked row for the identity (the latest bind wins), then inserts or updates
   * this owner's row (a revoked row becomes connected again with the same id; names and metadata
   * are replaced, absent ones cleared), and records `taken_over` (for each previous owner) and
   * `bound` events. A concurrent writer surfaces as a unique violation; the bind is retried, up
   * to 3 attempts.
   *
   * @throws AppError `CONFLICT` (409) when every attempt collided with a concurrent writer.
   */
  async bind(input: {
    ownerUserId: string;
    identity: ChannelIdentity;
    externalAccountName?: string;
    workspaceName?: string;
    metadata?: Record<string, unknown>;
  }): Promise<{ connection: ConnectionRecord; previousOwnerIds: string[] }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction((tx) => this.bindOnce(tx, input));
      } catch (error) {
        if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
        if (attempt >= BIND_ATTEMPTS) {
          throw new AppError('CONFLICT', 'channel identity bind collided with concurrent writers', {
            status: 409,
            cause: error,
            userMessage: 'This chat account is being connected by someone else right now. Try again.',
          });
        }
      }
    }
  }

  private async bindOnce(
    tx: Transaction,
    input: Parameters<ConnectionsRepo['bind']>[0],
  ): Promise<{ connection: ConnectionRecord; previousOwnerIds: string[] }> {
    const { ownerUserId, identity } = input;
    const revoked = await tx
      .update(channelConnections)
      .set({ status: 'revoked', updatedAt: sql`now()` })
      .where(and(identityWhere(identity), ne(channelConnections.ownerUserId, ownerUserId), ne(channelConnections.status, 'revoked')))
      .returning({ id: channelConnections.id, ownerUserId: channelConnections.ownerUserId });
    const fields = {
      status: 'connected' as const,
      externalAccountName: input.externalAccountName ?? null,
      workspaceName: input.workspaceName ?? null,
      metadata: input.metadata ?? {},
    };
    const [connection] = await tx
      .insert(channelConnections)
      .values({ id: randomUUID(), ownerUserId, ...identity, ...fields })
      .onConflictDoUpdate({
        target: [
          channelConnections.ownerUserId,
          channelConnections.provider,
          channelConnections.externalAccountId,
          channelConnections.workspaceId,
        ],
        set: { ...fields, updatedAt: sql`now()` },
      })
      .returning();
    if (!connection) throw new Error('upsert returned no row');
    // clock_timestamp(), not now(), and two statements: the takeover reads as older than the bind.
    if (revoked.length > 0) {
      await tx.insert(channelConnectionEvents).values(
        revoked.map((row) => ({
          id: randomUUID(),
          kind: 'taken_over' as const,
          ...identity,
          userId: row.ownerUserId,
          connectionId: row.id,
          createdAt: sql`clock_timestamp()`,
        })),
      );
    }
    await tx.insert(channelConnectionEvents).values({
      id: randomUUID(),
      kind: 'bound',
      ...identity,
      userId: ownerUserId,
      connectionId: connection.id,
      createdAt: sql`clock_timestamp()`,
    });
    return { connection: connection as ConnectionRecord, previousOwnerIds: [...new Set(revoked.map((row) => row.ownerUserId))] };
  }

  /**
   * The connected row for the identity (newest `updated_at`, then id) with its owner's shell
   * grant and disabled state, or undefined; one indexed query.
   */
  async findActive(identity: ChannelIdentity): Promise<ActiveConnection | undefined> {
    const [row] = await this.db
      .select({
        ...getTableColumns(channelConnections),
        ownerCanUseShell: users.canUseShell,
        isOwnerDisabled: sql<boolean>`(${users.disabledAt} is not null)`.mapWith(Boolean),
      })
      .from(channelConnections)
      .innerJoin(users, eq(users.id, channelConnections.ownerUserId))
      .where(and(identityWhere(identity), eq(channelConnections.status, 'connected')))
      .orderBy(desc(channelConnections.updatedAt), desc(channelConnections.id))
      .limit(1);
    return row as ActiveConnection | undefined;
  }

  /** The owner's rows of every status, newest `updated_at` first. */
  async listForOwner(ownerUserId: string): Promise<ConnectionRecord[]> {
    if (!isUuid(ownerUserId)) return [];
    const rows = await this.db
      .select()
      .from(channelConnections)
      .where(eq(channelConnections.ownerUserId, ownerUserId))
      .orderBy(desc(channelConnections.updatedAt), desc(channelConnections.createdAt), desc(channelConnections.id));
    return rows as ConnectionRecord[];
  }

  /**
   * Revokes the owner's connection `id` and records `unbound`. False, changing nothing, for
   * unknown or malformed ids, another owner's row, or a row already revoked.
   */
  async disconnect(id: string, ownerUserId: string): Promise<boolean> {
    if (!isUuid(id) || !isUuid(ownerUserId)) return false;
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(channelConnections)
        .set({ status: 'revoked', updatedAt: sql`now()` })
        .where(and(eq(channelConnections.id, id), eq(channelConnections.ownerUserId, ownerUserId), ne(channelConnections.status, 'revoked')))
        .returning();
      if (!row) return false;
      await tx.insert(channelConnectionEvents).values({
        id: randomUUID(),
        kind: 'unbound',
        provider: row.provider,
        externalAccountId: row.externalAccountId,
        workspaceId: row.workspaceId,
        userId: ownerUserId,
        connectionId: row.id,
      });
      return true;
    });
  }

  /**
   * Records a refused code attempt by this sender: `code_rejected` (read, matched nothing; counted
   * by the limits) or a refusal unread for being over a limit. The code itself is never stored.
   */
  async recordRejectedCode(identity: ChannelIdentity, kind: CodeRefusalKind = 'code_rejected'): Promise<void> {
    await this.db.insert(channelConnectionEvents).values({ id: randomUUID(), kind, ...identity });
  }

  /**
   * `code_rejected` events since `since` on `provider`: by this sender (external account, any
   * workspace) and by every sender. One query on the provider index.
   */
  async countRejectedCodes(input: { provider: string; externalAccountId: string; since: Date }): Promise<{ account: number; provider: number }> {
    const [row] = await this.db
      .select({
        account: sql<number>`count(*) filter (where ${channelConnectionEvents.externalAccountId} = ${input.externalAccountId})`.mapWith(Number),
        provider: count(),
      })
      .from(channelConnectionEvents)
      .where(
        and(
          eq(channelConnectionEvents.provider, input.provider),
          eq(channelConnectionEvents.kind, 'code_rejected'),
          gte(channelConnectionEvents.createdAt, input.since),
        ),
      );
    return { account: row?.account ?? 0, provider: row?.provider ?? 0 };
  }

  /** The audit trail, newest first, at most `limit` entries; for tests and operators. */
  async events(filter: { provider?: string; externalAccountId?: string }, limit: number): Promise<ConnectionEvent[]> {
    return this.db
      .select(eventColumns)
      .from(channelConnectionEvents)
      .where(
        and(
          filter.provider === undefined ? undefined : eq(channelConnectionEvents.provider, filter.provider),
          filter.externalAccountId === undefined
            ? undefined
            : eq(channelConnectionEvents.externalAccountId, filter.externalAccountId),
        ),
      )
      .orderBy(desc(channelConnectionEvents.createdAt), desc(channelConnectionEvents.seq))
      .limit(limit);
  }

  /**
   * One page of the whole audit trail in insertion order, newest first: at most `limit` events
   * whose `seq` is below `beforeSeq` (absent = from the newest). The next page starts before the
   * last event's `seq`.
   */
  async eventPage(input: { limit: number; beforeSeq?: number }): Promise<ConnectionEvent[]> {
    return this.db
      .select(eventColumns)
      .from(channelConnectionEvents)
      .where(input.beforeSeq === undefined ? undefined : lt(channelConnectionEvents.seq, input.beforeSeq))
      .orderBy(desc(channelConnectionEvents.seq))
      .limit(input.limit);
  }
}

const eventColumns = {
  id: channelConnectionEvents.id,
  seq: channelConnectionEvents.seq,
  kind: channelConnectionEvents.kind,
  provider: channelConnectionEvents.provider,
  externalAccountId: channelConnectionEvents.externalAccountId,
  workspaceId: channelConnectionEvents.workspaceId,
  userId: channelConnectionEvents.userId,
  connectionId: channelConnectionEvents.connectionId,
  createdAt: channelConnectionEvents.createdAt,
};

function identityWhere(identity: ChannelIdentity) {
  return and(
    eq(channelConnections.provider, identity.provider),
    eq(channelConnections.externalAccountId, identity.externalAccountId),
    eq(channelConnections.workspaceId, identity.workspaceId),
  );
}
