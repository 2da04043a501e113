import { createHash, randomBytes } from 'node:crypto';
import { and, count, eq, gt, isNull, lte, sql } from 'drizzle-orm';
import { AppError } from '../../errors.js';
import type { Database } from '../index.js';
import { channelConnectCodes } from '../schema/index.js';
import { hashSecret } from './users-repo.js';

/** 128 bits, as `secrets.token_urlsafe(16)` in the reference (§8.1). */
const CODE_BYTES = 16;

/**
 * One-time connect codes (reference §8.1). Only `hashSecret(code)` is stored; the code itself is
 * returned once by `mint` and proves ownership when a chat account sends it back.
 */
export class ConnectCodesRepo {
  constructor(private readonly db: Database) {}

  /**
   * Mints a code for `(ownerUserId, provider)`, valid for `ttlMs` from `now`. In one transaction,
   * serialized per `(owner, provider)` by an advisory lock so concurrent mints cannot exceed the
   * cap: deletes that pair's expired codes, counts pending ones (unconsumed, unexpired), inserts.
   *
   * @throws AppError `TOO_MANY_PENDING_CODES` (429) when `maxPending` codes are already pending.
   */
  async mint(input: {
    ownerUserId: string;
    provider: string;
    ttlMs: number;
    maxPending: number;
    now: Date;
  }): Promise<{ code: string; expiresAt: Date }> {
    const { ownerUserId, provider, now } = input;
    const code = randomBytes(CODE_BYTES).toString('base64url');
    const expiresAt = new Date(now.getTime() + input.ttlMs);
    const ofPair = and(eq(channelConnectCodes.ownerUserId, ownerUserId), eq(channelConnectCodes.provider, provider));
    await this.db.transaction(async (tx) => {
      // Passed as text: postgres-js cannot bind a JS bigint by default.
      await tx.execute(sql`select pg_advisory_xact_lock(${advisoryLockKey(ownerUserId, provider)}::bigint)`);
      await tx.delete(channelConnectCodes).where(and(ofPair, lte(channelConnectCodes.expiresAt, now)));
      const [pending] = await tx
        .select({ n: count() })
        .from(channelConnectCodes)
        .where(and(ofPair, isNull(channelConnectCodes.consumedAt), gt(channelConnectCodes.expiresAt, now)));
      if ((pending?.n ?? 0) >= input.maxPending) {
        throw new AppError('TOO_MANY_PENDING_CODES', 'pending connect codes at the cap', {
          status: 429,
          userMessage: 'Too many pending channel connection codes. Wait for existing codes to expire or use one of them.',
        });
      }
      await tx
        .insert(channelConnectCodes)
        .values({ codeHash: hashSecret(code), ownerUserId, provider, expiresAt, createdAt: now });
    });
    return { code, expiresAt };
  }

  /**
   * Consumes `code` for `provider` exactly once, in one conditional UPDATE: of concurrent
   * consumers only one gets the owner's user id. Undefined when the code is unknown, expired at
   * `now`, already consumed, or was minted for another provider.
   */
  async consume(input: { provider: string; code: string; now: Date }): Promise<string | undefined> {
    const [row] = await this.db
      .update(channelConnectCodes)
      .set({ consumedAt: input.now })
      .where(
        and(
          eq(channelConnectCodes.codeHash, hashSecret(input.code)),
          eq(channelConnectCodes.provider, input.provider),
          isNull(channelConnectCodes.consumedAt),
          gt(channelConnectCodes.expiresAt, input.now),
        ),
      )
      .returning({ ownerUserId: channelConnectCodes.ownerUserId });
    return row?.ownerUserId;
  }
}

/** First 8 bytes of sha256(owner + "\0" + provider), masked to 63 bits (reference §8.1), as decimal text. */
function advisoryLockKey(ownerUserId: string, provider: string): string {
  const digest = createHash('sha256').update(`${ownerUserId}\0${provider}`, 'utf8').digest();
  return (digest.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn).toString();
}
