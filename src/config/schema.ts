import { z } from 'zod';
import { channelConnectionsConfigSchema } from '../accounts/config.js';
import { modelsConfigSchema } from '../agent/config.js';
import { summarizationConfigSchema } from '../agent/context/config.js';
import { goalsConfigSchema } from '../agent/goals/config.js';
import { mcpServersConfigSchema } from '../agent/mcp/config.js';
import { memoryConfigSchema } from '../agent/memory/config.js';
import { sandboxConfigSchema } from '../agent/sandbox/config.js';
import { subagentsConfigSchema } from '../agent/subagents/config.js';
import { webConfigSchema } from '../agent/web/config.js';
import { intakeConfigShape } from '../bus/config.js';
import type { ChannelDefinition } from '../channel/types.js';
import { databaseConfigSchema } from '../db/config.js';
import { serverConfigSchema } from '../gateway/config.js';
import { conversationConfigShape } from '../manager/config.js';
import { metricsConfigSchema } from '../metrics-history.js';
import { runtimeConfigSchema } from '../runtime/config.js';
import { schedulesConfigSchema } from '../schedules/config.js';

/** Platforms of the reference this build does not have; a block for one is ignored with a warning. */
export const UNSUPPORTED_PLATFORMS = ['buzz'] as const;

/**
 * The whole config.yaml (DESIGN.md "Configuration contract"). Each module owns its part; the
 * platform blocks come from the registered channel definitions.
 */
export function buildConfigSchema(platforms: readonly ChannelDefinition[]) {
  const platformShape = Object.fromEntries(platforms.map((p) => [p.name, p.configSchema.optional()]));
  return z.strictObject({
    server: serverConfigSchema,
    data_dir: z.string().min(1).default('./.data').describe('Where the embedded database and user files live.'),
    database: databaseConfigSchema,
    redis: z
      .strictObject({
        url: z.string().regex(/^rediss?:\/\//, 'a redis:// URL').optional().describe('Absent: in-process bus and state.'),
        key_prefix: z
          .string()
          .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, - and _')
          .default('deerflow')
          .describe('Prefix of every Redis key; the processes of one deployment share it, two deployments on one Redis must not.'),
        handover_seconds: z
          .number()
          .min(1)
          .max(600)
          .default(10)
          .describe('How soon a message whose process died mid-way is taken up by another process.'),
      })
      .prefault({}),
    auth: z
      .strictObject({
        admin_token: z.string().min(16, 'at least 16 characters').optional().describe('Operator token for user management.'),
      })
      .prefault({}),
    log: z
      .strictObject({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        format: z
          .enum(['auto', 'json', 'pretty'])
          .default('auto')
          .describe('json: one JSON object a line (for log collectors); pretty: coloured lines for people; auto: pretty on a terminal, else json.'),
      })
      .prefault({}),
    metrics: metricsConfigSchema,
    runtime: runtimeConfigSchema,
    models: modelsConfigSchema,
    sandbox: sandboxConfigSchema,
    memory: memoryConfigSchema,
    summarization: summarizationConfigSchema,
    web: webConfigSchema,
    mcp_servers: mcpServersConfigSchema,
    subagents: subagentsConfigSchema,
    goals: goalsConfigSchema,
    schedules: schedulesConfigSchema,
    skills: z
      .strictObject({
        dir: z
          .string()
          .min(1)
          .optional()
          .describe('Folder holding public/ and custom/ skills; absent: the skills/ folder shipped with the server.'),
      })
      .prefault({}),
    agents: z
      .strictObject({
        dir: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Folder of custom agents (<name>/config.yaml + SOUL.md, GitHub bindings); absent: the agents/ folder shipped with the server. Without lead/SOUL.md in it, the shipped default persona is used.',
          ),
      })
      .prefault({}),
    channels: z.looseObject({ ...intakeConfigShape, ...conversationConfigShape, ...platformShape }).prefault({}),
    channel_connections: channelConnectionsConfigSchema,
  })
    .superRefine((config, context) => {
      // Settings that name a model must name one that exists, or the first run would fail instead of start-up.
      const names = new Set(config.models.map((model) => model.name));
      const references = [
        [['memory', 'model_name'], config.memory.model_name],
        [['goals', 'evaluator_model'], config.goals.evaluator_model],
        [['summarization', 'model_name'], config.summarization.model_name],
      ] as const;
      for (const [path, name] of references) {
        if (name !== undefined && !names.has(name)) {
          context.addIssue({ code: 'custom', path: [...path], message: `no model named "${name}" under models:` });
        }
      }
      if (config.runtime.url !== undefined) refineForRemoteAgent(config, platforms, context);
    });
}

/**
 * With `runtime.url` the agent runs on the agent server: what would only work in this process is
 * refused, so that nobody believes it is in use.
 */
function refineForRemoteAgent(
  config: { models: readonly unknown[]; mcp_servers: Record<string, unknown>; channels: Record<string, unknown> },
  platforms: readonly ChannelDefinition[],
  context: z.RefinementCtx,
): void {
  const elsewhere = 'runs on the agent server at runtime.url: configure it there';
  if (config.models.length > 0) context.addIssue({ code: 'custom', path: ['models'], message: `not used: the agent ${elsewhere}` });
  if (Object.keys(config.mcp_servers).length > 0) {
    context.addIssue({ code: 'custom', path: ['mcp_servers'], message: `not used: the agent ${elsewhere}` });
  }
  for (const platform of platforms) {
    const channelConfig = config.channels[platform.name];
    if (channelConfig !== undefined && platform.needsEmbeddedRuntime?.(channelConfig) === true) {
      context.addIssue({
        code: 'custom',
        path: ['channels', platform.name],
        message: `needs the agent in this process (no runtime.url): its runs get shell credentials that are never sent to another server`,
      });
    }
  }
}

export type Config = z.infer<ReturnType<typeof buildConfigSchema>>;
