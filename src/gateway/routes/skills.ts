import { z } from 'zod';
import type { Skill, SkillRegistry } from '../../agent/skills/index.js';
import { requireOperator } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const skillSchema = z.object({
  name: z.string(),
  description: z.string(),
  license: z.string().nullable(),
  allowed_tools: z.array(z.string()).nullable(),
  source: z.enum(['public', 'custom']),
  path: z.string().describe('Where the agent reads it, under /mnt/skills.'),
  enabled: z.boolean(),
});

const skillParamsSchema = z.object({ name: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'a skill name') });

function toSkillJson(skill: Skill): z.infer<typeof skillSchema> {
  return {
    name: skill.name,
    description: skill.description,
    license: skill.license ?? null,
    allowed_tools: skill.allowedTools ?? null,
    source: skill.source,
    path: skill.path,
    enabled: skill.isEnabled,
  };
}

/** `GET /skills` and `PUT /skills/:name` (at `/api`): the installed skills and their switches. */
export const skillRoutes: ZodPluginAsync<{ skills: SkillRegistry }> = async (app, { skills }) => {
  app.get('/skills', { schema: { response: { 200: z.object({ skills: z.array(skillSchema) }), ...errorResponses } } }, async () => ({
    skills: (await skills.list()).map(toSkillJson),
  }));

  app.put(
    '/skills/:name',
    {
      schema: {
        params: skillParamsSchema,
        body: z.strictObject({ enabled: z.boolean() }),
        response: { 200: skillSchema, ...errorResponses },
      },
    },
    async (request) => {
      // Skills are the server's, not one person's: with accounts, only the operator switches them.
      if (request.principal?.kind === 'user') requireOperator(request);
      return toSkillJson(await skills.setEnabled(request.params.name, request.body.enabled));
    },
  );
};
