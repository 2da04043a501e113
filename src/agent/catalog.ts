import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_AGENT_NAME } from './prompt.js';

/** A custom agent as chat shows it (`/agent`). */
export interface AgentEntry {
  name: string;
  description: string;
}

/** Agent folder names, as `/agent <name>` and the runtime accept them. */
export const AGENT_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** The folders of `agentsDir` that are agents (named as {@link AGENT_NAME} says), sorted; none when it cannot be read. */
export async function agentFolderNames(agentsDir: string): Promise<string[]> {
  try {
    const entries = await readdir(agentsDir, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory() && AGENT_NAME.test(entry.name))
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

/** The keys of `agents/<name>/config.yaml` that decide who may choose the agent in chat. */
const chatSettingsSchema = z.looseObject({
  description: z.string().optional().catch(undefined),
  created_by: z.string().optional().catch(undefined),
  chat: z.looseObject({ enabled: z.boolean().optional().catch(undefined) }).nullish().catch(undefined),
});

/**
 * The custom agents of the agents folder that people may choose in chat: those whose
 * `config.yaml` says `chat: { enabled: true }` (the operator shares them), and for each person
 * the ones they created themselves with `/bootstrap` (`created_by`). Read from the folder at each
 * call, so an agent made or shared a moment ago is there; a folder whose config cannot be read
 * is left out, never guessed.
 */
export class AgentCatalog {
  constructor(private readonly agentsDir: string) {}

  /** The agents `userId` (a storage user id) may choose, by name. */
  async availableTo(userId: string): Promise<AgentEntry[]> {
    const entries = await Promise.all(
      (await agentFolderNames(this.agentsDir))
        .filter((name) => name !== DEFAULT_AGENT_NAME)
        .map(async (name) => {
          const settings = await this.settingsOf(name);
          if (settings === undefined) return undefined;
          const isOffered = settings.chat?.enabled === true || (settings.created_by !== undefined && settings.created_by === userId);
          return isOffered ? { name, description: settings.description?.trim() ?? '' } : undefined;
        }),
    );
    return entries.filter((entry): entry is AgentEntry => entry !== undefined);
  }

  private async settingsOf(name: string): Promise<z.infer<typeof chatSettingsSchema> | undefined> {
    try {
      const parsed = chatSettingsSchema.safeParse(parseYaml(await readFile(join(this.agentsDir, name, 'config.yaml'), 'utf8')) ?? {});
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }
}
