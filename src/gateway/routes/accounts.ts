import { z } from 'zod';
import type { ChannelConnections } from '../../accounts/connections.js';
import type { ConnectionEvent } from '../../db/repos/connections-repo.js';
import type { UserRecord, UsersRepo } from '../../db/repos/users-repo.js';
import { CONNECTION_EVENTS } from '../../db/schema/index.js';
import { NotFoundError } from '../../errors.js';
import { requireOperator, requireUser } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const userSchema = z.object({ id: z.string(), name: z.string(), can_use_shell: z.boolean(), disabled: z.boolean(), created_at: z.string() });
const toUserJson = (user: UserRecord) => ({
  id: user.id,
  name: user.name,
  can_use_shell: user.canUseShell,
  disabled: user.isDisabled,
  created_at: user.createdAt.toISOString(),
});

const userParamsSchema = z.object({ user_id: z.string().max(64) });

/** `PATCH /users/:user_id`: either change, or both; at least one. */
const userPatchSchema = z
  .strictObject({ can_use_shell: z.boolean().optional(), disabled: z.boolean().optional() })
  .refine((patch) => patch.can_use_shell !== undefined || patch.disabled !== undefined, 'give can_use_shell, disabled or both');

const providerSchema = z.object({
  provider: z.string(),
  display_name: z.string(),
  enabled: z.boolean(),
  configured: z.boolean(),
  connectable: z.boolean(),
  unavailable_reason: z.string().nullable(),
  auth_mode: z.enum(['deep_link', 'binding_code']),
  connection_status: z.enum(['connected', 'not_connected', 'revoked']),
});

const connectionSchema = z.object({
  id: z.string(),
  provider: z.string(),
  status: z.enum(['connected', 'revoked']),
  external_account_id: z.string(),
  external_account_name: z.string().nullable(),
  workspace_id: z.string().nullable(),
  workspace_name: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const connectResponseSchema = z.object({
  provider: z.string(),
  mode: z.enum(['deep_link', 'binding_code']),
  url: z.string().nullable(),
  code: z.string(),
  instruction: z.string(),
  expires_in: z.number(),
});

const auditEventSchema = z.object({
  id: z.string(),
  seq: z.number(),
  event_type: z.enum(CONNECTION_EVENTS),
  provider: z.string(),
  external_account_id: z.string(),
  workspace_id: z.string().nullable(),
  user_id: z.string().nullable(),
  connection_id: z.string().nullable(),
  created_at: z.string(),
});

const toAuditJson = (event: ConnectionEvent) => ({
  id: event.id,
  seq: event.seq,
  event_type: event.kind,
  provider: event.provider,
  external_account_id: event.externalAccountId,
  workspace_id: event.workspaceId === '' ? null : event.workspaceId,
  user_id: event.userId,
  connection_id: event.connectionId,
  created_at: event.createdAt.toISOString(),
});

/** Most audit events one page returns; the default page is smaller. */
const MAX_AUDIT_PAGE = 200;

/** Names people type for one another; no control characters, no surrounding spaces. */
const userNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'at most 64 characters')
  .regex(/^[^\p{Cc}]+$/u, 'no control characters');

/**
 * Accounts (at `/api`): `GET /me`; `GET/POST /users`, `PATCH /users/:user_id` (shell grant,
 * disabled), `POST /users/:user_id/rotate-key` and `DELETE /users/:user_id` for the operator; the connections of the signed-in user under `/channels` (reference
 * §8.4); and the operator's audit trail of bindings and refused codes at `/audit/connections`.
 */
export const accountRoutes: ZodPluginAsync<{ users: UsersRepo; connections: ChannelConnections }> = async (app, { users, connections }) => {
  app.get(
    '/me',
    { schema: { response: { 200: z.object({ user: userSchema.nullable(), is_operator: z.boolean() }), ...errorResponses } } },
    async (request) => {
      const principal = request.principal;
      if (!principal) requireUser(request);
      return principal?.kind === 'user' ? { user: toUserJson(principal.user), is_operator: false } : { user: null, is_operator: true };
    },
  );

  app.get('/users', { schema: { response: { 200: z.object({ users: z.array(userSchema) }), ...errorResponses } } }, async (request) => {
    requireOperator(request);
    return { users: (await users.list()).map(toUserJson) };
  });

  app.post(
    '/users',
    {
      schema: {
        body: z.strictObject({ name: userNameSchema }),
        response: { 201: z.object({ user: userSchema, api_key: z.string() }), ...errorResponses },
      },
    },
    async (request, reply) => {
      requireOperator(request);
      const { user, apiKey } = await users.create(request.body.name);
      return reply.status(201).send({ user: toUserJson(user), api_key: apiKey });
    },
  );

  app.patch(
    '/users/:user_id',
    { schema: { params: userParamsSchema, body: userPatchSchema, response: { 200: z.object({ user: userSchema }), ...errorResponses } } },
    async (request) => {
      requireOperator(request);
      const { user_id: id } = request.params;
      const { can_use_shell: canUseShell, disabled } = request.body;
      let user = await users.get(id);
      if (user && canUseShell !== undefined) user = await users.setCanUseShell(id, canUseShell);
      if (user && disabled !== undefined) user = await users.setDisabled(id, disabled);
      if (!user) throw new NotFoundError('User');
      request.log.info({ userId: user.id, canUseShell: user.canUseShell, isDisabled: user.isDisabled }, 'user changed');
      return { user: toUserJson(user) };
    },
  );

  app.post(
    '/users/:user_id/rotate-key',
    { schema: { params: userParamsSchema, response: { 200: z.object({ user: userSchema, api_key: z.string() }), ...errorResponses } } },
    async (request) => {
      requireOperator(request);
      const rotated = await users.rotateKey(request.params.user_id);
      if (!rotated) throw new NotFoundError('User');
      request.log.info({ userId: rotated.user.id }, 'api key rotated');
      return { user: toUserJson(rotated.user), api_key: rotated.apiKey };
    },
  );

  app.delete(
    '/users/:user_id',
    { schema: { params: userParamsSchema, response: { 204: z.undefined(), ...errorResponses } } },
    async (request, reply) => {
      requireOperator(request);
      if (!(await users.delete(request.params.user_id))) throw new NotFoundError('User');
      request.log.info({ userId: request.params.user_id }, 'user deleted');
      return reply.status(204).send(undefined);
    },
  );

  app.get(
    '/audit/connections',
    {
      schema: {
        querystring: z.strictObject({
          limit: z.coerce.number().int().min(1).max(MAX_AUDIT_PAGE).default(50),
          before: z.coerce.number().int().positive().optional(),
        }),
        response: { 200: z.object({ events: z.array(auditEventSchema), next_before: z.number().nullable() }), ...errorResponses },
      },
    },
    async (request) => {
      requireOperator(request);
      const { limit, before } = request.query;
      const events = await connections.auditTrail({ limit, ...(before === undefined ? {} : { beforeSeq: before }) });
      // A full page may have more behind it; a short one is the end of the trail.
      return { events: events.map(toAuditJson), next_before: events.length === limit ? (events.at(-1)?.seq ?? null) : null };
    },
  );

  app.get(
    '/channels/providers',
    { schema: { response: { 200: z.object({ enabled: z.boolean(), providers: z.array(providerSchema) }), ...errorResponses } } },
    async (request) => {
      const user = requireUser(request);
      return { enabled: connections.isEnabled, providers: await connections.providers(user.id) };
    },
  );

  app.get(
    '/channels/connections',
    { schema: { response: { 200: z.object({ connections: z.array(connectionSchema) }), ...errorResponses } } },
    async (request) => ({ connections: await connections.list(requireUser(request).id) }),
  );

  app.post(
    '/channels/:provider/connect',
    {
      schema: {
        params: z.object({ provider: z.string().max(64) }),
        response: { 200: connectResponseSchema, ...errorResponses },
      },
    },
    async (request) => connections.connect(requireUser(request).id, request.params.provider),
  );

  app.delete(
    '/channels/connections/:connection_id',
    { schema: { params: z.object({ connection_id: z.string().max(64) }), response: { 204: z.undefined(), ...errorResponses } } },
    async (request, reply) => {
      await connections.disconnect(request.params.connection_id, requireUser(request).id);
      return reply.status(204).send(undefined);
    },
  );
};
