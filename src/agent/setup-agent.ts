import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunnableConfig } from '@langchain/core/runnables';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { AGENT_NAME } from './catalog.js';
import { DEFAULT_AGENT_NAME } from './prompt.js';
import { isFsError } from './sandbox/paths.js';

export const SETUP_AGENT = 'setup_agent';

/** Characters of a persona the tool saves at most: a system prompt, not a document. */
const MAX_SOUL_CHARS = 20_000;

/**
 * `setup_agent`, offered to the runs of a `/bootstrap` conversation of a trusted sender: saves a
 * custom agent (`<agentsDir>/<name>/SOUL.md` and `config.yaml`) made in chat. A new agent is its
 * creator's alone (`created_by`, listed by `/agent` for them only) until the operator sets
 * `chat.enabled: true`; an existing one can be updated only by whoever created it, so no one
 * rewrites the operator's agents or another person's.
 */
export function createSetupAgentTool(agentsDir: string): StructuredToolInterface {
  return tool(
    async ({ name, description, soul }, config?: RunnableConfig) => {
      const creator = config?.configurable?.user_id;
      if (typeof creator !== 'string' || creator === '') return 'Error: this conversation has no user to own the agent.';
      if (name === DEFAULT_AGENT_NAME) return `Error: "${DEFAULT_AGENT_NAME}" is the default agent and cannot be replaced from chat; choose another name.`;
      const folder = join(agentsDir, name);
      const configPath = join(folder, 'config.yaml');
      let existing: string | undefined;
      try {
        existing = await readFile(configPath, 'utf8');
      } catch (error) {
        if (!isFsError(error, 'ENOENT')) return `Error: the agent "${name}" could not be read.`;
      }
      const document = parseDocument(existing ?? '');
      if (existing !== undefined && document.get('created_by') !== creator) {
        return `Error: an agent named "${name}" already exists and was not created by this user; choose another name.`;
      }
      if (existing === undefined) {
        document.commentBefore = ' Created in chat with /bootstrap. chat.enabled: true lets everyone choose it with /agent; its creator always can.';
        document.set('name', name);
        document.set('created_by', creator);
        document.set('chat', { enabled: false });
      }
      document.set('description', description);
      await mkdir(folder, { recursive: true });
      await writeAtomically(join(folder, 'SOUL.md'), `${soul.trim()}\n`);
      await writeAtomically(configPath, document.toString());
      return `Saved the agent "${name}"${existing === undefined ? '' : ' (updated)'}. The user can talk to it with /agent ${name}.`;
    },
    {
      name: SETUP_AGENT,
      description: 'Save a custom agent made with the user: its name, a one-line description and its persona (SOUL.md). Saving an agent this user made before updates it.',
      schema: z.object({
        name: z.string().regex(AGENT_NAME, 'lowercase letters, digits and hyphens, e.g. sql-reviewer').max(40).describe('Short name, e.g. sql-reviewer.'),
        description: z.string().min(1).max(200).describe('One line saying what the agent does, shown in /agent.'),
        soul: z.string().min(1).max(MAX_SOUL_CHARS).describe('The persona: a system prompt in the second person.'),
      }),
    },
  );
}

/** Written beside and renamed over, so a run that reads the agent never sees half a file. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o644 });
  await rename(temporary, path);
}
