import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import { ConflictError } from '../../errors.js';
import { type Database, sqlState, UNIQUE_VIOLATION } from '../index.js';
import { channelConnectionEvents, channelConnections, schedules, users } from '../schema/index.js';

/** A person with a server account; their id is also their storage user id. */
export interface UserRecord {
  id: string;
  name: string;
  /** Whether the operator granted this user `bash` (accounts mode; default false). */
  canUseShell: boolean;
  /** Whether the operator disabled the account: its key answers 403 and its bound chats are told so. */
  isDisabled: boolean;
  createdAt: Date;
}

/** Prefix of every API key, so a leaked key is recognisable in scanners and logs. */
const API_KEY_PREFIX = 'dfc_';
const API_KEY_BYTES = 32;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** SHA-256 of `value` as lower-case hex: how API keys and connect codes are stored. */
export function hashSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** True for a textual uuid; lets repositories answer "not found" instead of a database cast error. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

const userColumns = {
  id: users.id,
  name: users.name,
  canUseShell: users.canUseShell,
  isDisabled: sql<boolean>`(${users.disabledAt} is not null)`.mapWith(Boolean),
  createdAt: users.createdAt,
};

function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(API_KEY_BYTES).toString('base64url')}`;
}

/** Server accounts and their API keys. Keys are shown once by `create` and only their hash is kept. */
export class UsersRepo {
  constructor(private readonly db: Database) {}

  /**
   * Creates a user with a fresh API key (`dfc_` + 32 random bytes, base64url); only
   * `hashSecret(key)` is stored, so the returned key cannot be recovered later.
   *
   * @throws ConflictError (409) when a user with this name exists.
   */
  async create(name: string): Promise<{ user: UserRecord; apiKey: string }> {
    const apiKey = newApiKey();
    try {
      const [user] = await this.db
        .insert(users)
        .values({ id: randomUUID(), name, apiKeyHash: hashSecret(apiKey) })
        .returning(userColumns);
      return { user: user as UserRecord, apiKey };
    } catch (error) {
      // The key hash is 256 random bits; a unique violation here is the name.
      if (sqlState(error) === UNIQUE_VIOLATION) throw new ConflictError('A user with this name already exists.');
      throw error;
    }
  }

  /** The key's owner, by one lookup on the unique hash index; undefined for unknown keys. */
  async findByApiKey(apiKey: string): Promise<UserRecord | undefined> {
    const [user] = await this.db.select(userColumns).from(users).where(eq(users.apiKeyHash, hashSecret(apiKey)));
    return user;
  }

  /** The user with this id; undefined when absent or when `id` is not a uuid. */
  async get(id: string): Promise<UserRecord | undefined> {
    if (!isUuid(id)) return undefined;
    const [user] = await this.db.select(userColumns).from(users).where(eq(users.id, id));
    return user;
  }

  /** The user with this id, else the one with this name (names are unique); undefined when neither exists. */
  async findByIdOrName(idOrName: string): Promise<UserRecord | undefined> {
    const byId = await this.get(idOrName);
    if (byId) return byId;
    const [user] = await this.db.select(userColumns).from(users).where(eq(users.name, idOrName));
    return user;
  }

  /**
   * Grants (`true`) or revokes (`false`) the user's shell; idempotent. Takes effect from the
   * user's next run. Resolves with the updated user, or undefined for an unknown (or non-uuid) id.
   */
  async setCanUseShell(id: string, canUseShell: boolean): Promise<UserRecord | undefined> {
    if (!isUuid(id)) return undefined;
    const [user] = await this.db.update(users).set({ canUseShell }).where(eq(users.id, id)).returning(userColumns);
    return user;
  }

  /**
   * Disables (`true`) or enables (`false`) the account; idempotent (a disabled account keeps its
   * first `disabled_at`). Takes effect on the key's next request and the bound chats' next
   * message. Resolves with the updated user, or undefined for an unknown (or non-uuid) id.
   */
  async setDisabled(id: string, isDisabled: boolean): Promise<UserRecord | undefined> {
    if (!isUuid(id)) return undefined;
    const [user] = await this.db
      .update(users)
      .set({ disabledAt: isDisabled ? sql`coalesce(${users.disabledAt}, now())` : null })
      .where(eq(users.id, id))
      .returning(userColumns);
    return user;
  }

  /**
   * Replaces the user's API key with a fresh one (shown once, only its hash kept): the old key
   * names nobody from this statement on. Undefined for an unknown (or non-uuid) id.
   */
  async rotateKey(id: string): Promise<{ user: UserRecord; apiKey: string } | undefined> {
    if (!isUuid(id)) return undefined;
    const apiKey = newApiKey();
    const [user] = await this.db.update(users).set({ apiKeyHash: hashSecret(apiKey) }).where(eq(users.id, id)).returning(userColumns);
    return user && { user, apiKey };
  }

  /**
   * Deletes the account in one transaction: records `unbound` for each of its live bindings and
   * one `user_deleted` event in the connection audit, cancels their live schedules (which would
   * otherwise go on answering into their old chats from their threads), then removes the user,
   * whose bindings, pending connect codes, conversation mappings and web chat conversations go
   * with it (foreign keys cascade). Threads and their checkpoints stay, owned by an id no key
   * names any more. False for an unknown id.
   */
  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return this.db.transaction(async (tx) => {
      const [found] = await tx.select({ id: users.id }).from(users).where(eq(users.id, id)).for('update');
      if (!found) return false;
      const bound = await tx
        .select()
        .from(channelConnections)
        .where(and(eq(channelConnections.ownerUserId, id), ne(channelConnections.status, 'revoked')));
      // clock_timestamp(): the unbinds read as older than the deletion, as in ConnectionsRepo.bind.
      if (bound.length > 0) {
        await tx.insert(channelConnectionEvents).values(
          bound.map((row) => ({
            id: randomUUID(),
            kind: 'unbound' as const,
            provider: row.provider,
            externalAccountId: row.externalAccountId,
            workspaceId: row.workspaceId,
            userId: id,
            connectionId: row.id,
            createdAt: sql`clock_timestamp()`,
          })),
        );
      }
      await tx
        .insert(channelConnectionEvents)
        .values({ id: randomUUID(), kind: 'user_deleted', provider: '', externalAccountId: '', userId: id, createdAt: sql`clock_timestamp()` });
      await tx
        .update(schedules)
        .set({ state: 'cancelled', nextRunAt: null, updatedAt: sql`now()` })
        .where(and(eq(schedules.ownerUserId, id), inArray(schedules.state, ['active', 'paused'])));
      await tx.delete(users).where(eq(users.id, id));
      return true;
    });
  }

  /** Every user, oldest first. */
  async list(): Promise<UserRecord[]> {
    return this.db.select(userColumns).from(users).orderBy(asc(users.createdAt), asc(users.id));
  }
}
