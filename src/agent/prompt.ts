import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, ConfigError, NotFoundError } from '../errors.js';

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

/** Custom agent names, as folder names and GitHub logins spell them (reference §4.5). */
const AGENT_NAME = /^[A-Za-z0-9-]+$/;

/** The agent of `agents/lead/`: every run that names no other. */
export const DEFAULT_AGENT_NAME = 'lead';

/** Whether a run's `context.agent_name` means the default agent (none given, or `lead`). */
export function isDefaultAgent(name: unknown): boolean {
  return name === undefined || name === null || name === '' || name === DEFAULT_AGENT_NAME;
}

/**
 * The persona of custom agent `name` (`context.agent_name`): its `SOUL.md`, or `fallback` (the
 * default agent's) when its folder has none.
 *
 * @throws AppError 400 for a name that is not letters, digits and hyphens; NotFoundError when
 *   `agents/<name>/` does not exist.
 */
export async function loadCustomAgentSoul(agentsDir: string, name: string, fallback: string): Promise<string> {
  if (!AGENT_NAME.test(name)) {
    throw new AppError('BAD_REQUEST', 'invalid agent name', {
      status: 400,
      userMessage: `Invalid agent name '${name}'. Use a custom agent name containing only letters, digits, and hyphens.`,
    });
  }
  const folder = join(agentsDir, name);
  try {
    return (await readFile(join(folder, 'SOUL.md'), 'utf8')).trim() || fallback;
  } catch {
    const isFolder = await stat(folder).then((info) => info.isDirectory(), () => false);
    if (!isFolder) throw new NotFoundError('Agent');
    return fallback;
  }
}

/** A file the user sent with the message being answered, as the agent sees it. */
export interface UploadedFileInfo {
  filename: string;
  size: number;
  /** Virtual path, `/mnt/user-data/uploads/<filename>`. */
  path: string;
  is_image: boolean;
}

export interface SystemPromptParts {
  soul: string;
  now: Date;
  /** Names of the tools this run has; the workspace section is left out when there are none. */
  tools: readonly string[];
  skills: string;
  activeSkill: string;
  memory: string;
  /** `<server>: <reason>` for each tool server this run was meant to have that is down now. */
  unavailableTools?: readonly string[];
  /** The run sets up a custom agent with the user (`/bootstrap`): `setup_agent` and how to use it. */
  isSettingUpAgent?: boolean;
  uploads: readonly UploadedFileInfo[];
  canAskClarification: boolean;
  /** The model reads pictures: uploaded ones are shown to it with the message. */
  canSeeImages?: boolean;
}

/**
 * The system prompt of one model call: persona, then facts the model cannot know by itself
 * (time, its workspace, skills, what it remembers about the user, files just sent). Sections
 * that do not apply are left out, so a plain chat costs no extra tokens.
 */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  const sections = [parts.soul, `Current date and time (UTC): ${parts.now.toISOString().slice(0, 16).replace('T', ' ')}.`];
  if (parts.tools.length > 0) sections.push(workspaceSection(parts.tools));
  if (parts.canAskClarification) {
    sections.push(
      'When a request is missing information only the user has, is ambiguous, or is risky, call `ask_clarification` instead of guessing; the user answers in their next message.',
    );
  }
  for (const block of [parts.skills, parts.activeSkill, parts.memory]) if (block !== '') sections.push(block);
  if ((parts.unavailableTools ?? []).length > 0) sections.push(unavailableToolsSection(parts.unavailableTools ?? []));
  if (parts.isSettingUpAgent === true) sections.push(AGENT_SETUP_INSTRUCTIONS);
  if (parts.uploads.length > 0) sections.push(uploadsSection(parts.uploads, parts.canSeeImages === true));
  return sections.join('\n\n');
}

function workspaceSection(tools: readonly string[]): string {
  const lines = [
    '<workspace>',
    'You have a private workspace for this conversation:',
    '- /mnt/user-data/workspace: your scratch folder (the working directory of bash).',
    '- /mnt/user-data/uploads: files the user sent you.',
    '- /mnt/user-data/outputs: put files the user should receive here, then call `present_files` with their paths; the chat delivers them after your answer.',
    '- /mnt/skills: skill instructions, read-only.',
    'Always use these absolute paths.',
  ];
  if (!tools.includes('bash')) {
    lines.push('Shell commands are not available in this conversation; the file tools still are.');
  }
  lines.push('</workspace>');
  return lines.join('\n');
}

/** The `<agent_setup>` section of a `/bootstrap` conversation: what the agent is there to do, and how it ends (with `setup_agent`). */
const AGENT_SETUP_INSTRUCTIONS = [
  '<agent_setup>',
  'This conversation sets up a custom agent with the user (/bootstrap). Find out what the agent is for, who it talks to, its tone, what it must and must not do, and a short name for it.',
  'Ask what you need one or two questions at a time (the user answers in plain messages). When you know enough, write its persona (its SOUL.md: a system prompt in the second person, "You are …") and save it with `setup_agent`.',
  'Then tell the user it is saved and that they can talk to it with /agent <name>. Saving again under the same name updates it.',
  '</agent_setup>',
].join('\n');

function unavailableToolsSection(servers: readonly string[]): string {
  return [
    '<unavailable_tools>',
    'These tool servers are down, so their tools are missing from this conversation for now. When a request needs one of them, tell the user which and why instead of guessing:',
    ...servers.map((server) => `- ${server}`),
    '</unavailable_tools>',
  ].join('\n');
}

function uploadsSection(uploads: readonly UploadedFileInfo[], canSeeImages: boolean): string {
  const lines = uploads.map((file) => `- ${file.path} (${file.size} bytes${file.is_image ? ', image' : ''})`);
  const section = ['<current_uploads>', 'The user sent these files with this message:', ...lines];
  if (uploads.some((file) => file.is_image)) {
    section.push(
      canSeeImages
        ? 'The images are shown to you with the message.'
        : 'You cannot see images in this conversation: tell the user so if the answer depends on what one shows, and work with what you can learn from the file itself.',
    );
  }
  section.push('</current_uploads>');
  return section.join('\n');
}
