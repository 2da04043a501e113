import type { FastifyPluginAsync, FastifySchemaCompiler, FastifySerializerCompiler, FastifyTypeProvider, RawServerDefault } from 'fastify';
import type { z } from 'zod';
import { AppError } from '../errors.js';

/** Makes a route's zod schemas its types: `request.body` is `z.output<body>`, replies are `z.input<response[status]>`. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

/** A route plugin whose schemas are zod schemas. */
export type ZodPluginAsync<Options extends Record<string, unknown> = Record<never, never>> = FastifyPluginAsync<
  Options,
  RawServerDefault,
  ZodTypeProvider
>;

const PART_NAMES: Record<string, string> = { querystring: 'query' };

/**
 * Validates params, query, body and headers with the route's zod schema; the parsed value (defaults
 * applied, unknown keys stripped) replaces the raw one. The first issue becomes a 400 `BAD_REQUEST`
 * whose message is `<part>.<path>: <issue>`, e.g. `body.assistant_id: Invalid input: expected string, received undefined`.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data: unknown) => {
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const issue = result.error.issues[0];
    const part = PART_NAMES[httpPart ?? ''] ?? httpPart ?? 'request';
    const path = [part, ...(issue?.path ?? []).map(String)].join('.');
    const message = `${path}: ${issue?.message ?? 'invalid'}`;
    return { error: new AppError('BAD_REQUEST', message, { status: 400, userMessage: message }) };
  };

/**
 * Serializes a reply through the route's response schema for its status, so nothing undeclared
 * leaves the server; a reply that does not match is a bug and becomes a logged 500.
 */
export const zodSerializerCompiler: FastifySerializerCompiler<z.ZodType> =
  ({ schema }) =>
  (data: unknown) =>
    JSON.stringify(schema.parse(data));
