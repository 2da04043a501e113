import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { UserRecord, UsersRepo } from '../db/repos/users-repo.js';
import { AppError } from '../errors.js';
import { MESSAGES } from '../manager/messages.js';

/** Who made a request: the operator (`auth.admin_token`) or a user (their API key). */
export type Principal = { kind: 'operator' } | { kind: 'user'; user: UserRecord };

/** Resolves `Authorization: Bearer <key>` headers; built once by the server. */
export interface Authenticator {
  /** Undefined for a missing header; throws 401 for a header that names nobody, 403 `USER_DISABLED` for a disabled account's key. */
  authenticate(header: string | undefined): Promise<Principal | undefined>;
}

/** One text for every failure: it never hints whether a user or key exists. */
const UNAUTHORIZED = 'Missing or invalid API key.';

export function unauthorized(): AppError {
  return new AppError('UNAUTHORIZED', 'request not authenticated', { status: 401, userMessage: UNAUTHORIZED });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Bearer keys: the operator token compared in constant time, else one indexed lookup of the
 * key's hash among users.
 */
export function createAuthenticator(options: { adminToken: string | undefined; users: UsersRepo }): Authenticator {
  const operatorDigest = options.adminToken === undefined ? undefined : digest(options.adminToken);
  return {
    async authenticate(header) {
      if (header === undefined || header === '') return undefined;
      const match = /^Bearer\s+(\S{1,512})$/i.exec(header);
      if (!match) throw unauthorized();
      const key = match[1] as string;
      if (operatorDigest && timingSafeEqual(digest(key), operatorDigest)) return { kind: 'operator' };
      const user = await options.users.findByApiKey(key);
      if (!user) throw unauthorized();
      // Only the key's holder learns the account is disabled: the key itself is the proof.
      if (user.isDisabled) throw new AppError('USER_DISABLED', 'disabled account', { status: 403, userMessage: MESSAGES.accountDisabled });
      return { kind: 'user', user };
    },
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the gateway's auth hook from the `Authorization` header. */
    principal: Principal | undefined;
  }
  interface FastifyContextConfig {
    /**
     * The route answers without a principal (health, the console's files, webhooks that check
     * their platform's signature). Every other route, and every path no route matches, needs one
     * whenever the server requires keys.
     */
    isPublic?: boolean;
  }
}

/** Route config of a route anyone may call: `app.get(url, { config: PUBLIC_ROUTE, ... })`. */
export const PUBLIC_ROUTE = { isPublic: true } as const;

/**
 * The gateway's `onRequest` hook, deny by default: it runs after routing, so the decision is made
 * on the route that matched, never on how the path was spelled. A route not declared public gets
 * the caller's principal, and 401 without one when `isPrincipalRequired`; a header that names
 * nobody is 401 everywhere but public routes.
 */
export function authenticateRequest(options: { authenticator: Authenticator; isPrincipalRequired: boolean }) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.routeOptions.config.isPublic === true) return;
    request.principal = await options.authenticator.authenticate(request.headers.authorization);
    if (!request.principal && options.isPrincipalRequired) throw unauthorized();
  };
}

/** The signed-in user, or 401 (the operator gets 403: these routes act for a person). */
export function requireUser(request: FastifyRequest): UserRecord {
  const principal = request.principal;
  if (!principal) throw unauthorized();
  if (principal.kind !== 'user') {
    throw new AppError('FORBIDDEN', 'operator on a user route', { status: 403, userMessage: 'Sign in with a user API key for this.' });
  }
  return principal.user;
}

/** 401 without credentials, 403 for users. */
export function requireOperator(request: FastifyRequest): void {
  const principal = request.principal;
  if (!principal) throw unauthorized();
  if (principal.kind !== 'operator') {
    throw new AppError('FORBIDDEN', 'user on an operator route', { status: 403, userMessage: 'Operator privileges required.' });
  }
}
