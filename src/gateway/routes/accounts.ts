import { z } from 'zod';
import type { ChannelConnections } from '../../accounts/connections.js';
import type { UsersRepo } from '../../db/repos/users-repo.js';
import { requireOperator, requireUser } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const userSchema = z.object({ id: z.string(), name: z.string(), created_at: z.string() });
const toUserJson = (user: { id: string; name: string; createdAt: Date }) => ({ id: user.id, name: user.name, created_at: user.createdAt.toISOString() });

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

/** Names people type for one another; no control characters, no surrounding spaces. */
const userNameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'at most 64 characters')
  .regex(/^[^\p{Cc}]+$/u, 'no control characters');

/**
 * Accounts (at `/api`): `GET /me`; `GET/POST /users` for the operator; and the connections of
 * the signed-in user under `/channels` (reference §8.4).
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
