import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

/** Reads an agent's persona (`agents/<name>/SOUL.md`), the core of its system prompt. */
export async function loadAgentSoul(agentsDir: string, name: string): Promise<string> {
  const path = join(agentsDir, name, 'SOUL.md');
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    throw new ConfigError([`agents/${name}/SOUL.md: the agent's prompt file is missing or unreadable`], {
      cause: error,
    });
  }
}

/** The system prompt for one run: persona plus facts the model cannot know by itself. */
export function buildSystemPrompt(soul: string, now: Date): string {
  return `${soul}\n\nCurrent date and time (UTC): ${now.toISOString().slice(0, 16).replace('T', ' ')}.`;
}
