import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunnableConfig } from '@langchain/core/runnables';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { z } from 'zod';
import { DEFAULT_USER_ID } from '../../runtime/types.js';
import { type BashSandbox, hostToVirtual, runBash } from './bash.js';
import { bubblewrapArgs, type SandboxUser, type SystemEntry } from './bubblewrap.js';
import type { SandboxConfig } from './config.js';
import { buildSandboxEnv } from './environment.js';
import { SandboxError, SandboxPaths, showPath, VIRTUAL_USER_DATA } from './paths.js';

/** What one tool call runs against: the thread's folders and variables injected for this call only. */
export interface SandboxContext {
  paths: SandboxPaths;
  /** Added to the bash environment on purpose, e.g. `DEERFLOW_CHANNEL_USER_ID`. */
  perCallEnv: Record<string, string>;
  /** The run's own network choice (an agent's `sandbox.network`); absent = `sandbox.network`. */
  isNetworkEnabled?: boolean | undefined;
  /** Values never shown to the model: replaced by `***` wherever they appear in command output. */
  maskedValues?: readonly string[];
}

/** `configurable` key of the run's secret variables (`RunOptions.sandboxSecrets`). */
export const SANDBOX_SECRETS_KEY = 'deerflow_sandbox_secrets';
/** `configurable` key of the run's plain variables (`RunOptions.sandboxVariables`). */
export const SANDBOX_VARIABLES_KEY = 'deerflow_sandbox_variables';
/** `configurable` key of the run's network choice (boolean; an agent's `sandbox.network`). */
export const SANDBOX_NETWORK_KEY = 'deerflow_sandbox_network';

/** Everything a bash call needs to start in bubblewrap, fixed at start. */
export interface BubblewrapSetup {
  bwrapPath: string;
  /** The sandbox user when the server runs as root. */
  user?: SandboxUser | undefined;
  /** From `systemLayout()`. */
  system: readonly SystemEntry[];
  /** Host paths to mask when a system folder holds them (data dir, config, repository). */
  hidden?: readonly { path: string; isDirectory: boolean }[];
}

export interface SandboxToolsOptions {
  /** Builds the context from the run's config (`configurable.thread_id`, `configurable.user_id`); may throw. */
  resolveContext: (config: RunnableConfig) => SandboxContext;
  config: SandboxConfig;
  /** The server's environment; only allow-listed names reach bash (`buildSandboxEnv`). */
  baseEnv: Record<string, string | undefined>;
  /** Run every shell in bubblewrap; absent = unsandboxed (`sandbox.isolation: none`, or auto without bwrap). */
  bubblewrap?: BubblewrapSetup | undefined;
}

/** Files bigger than this are refused by read_file and str_replace; bash (head, sed) can read parts. */
const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Entries ls returns at most. */
const MAX_LS_ENTRIES = 500;

const descriptionField = z
  .string()
  .describe('Explain why you are doing this in short words. ALWAYS PROVIDE THIS PARAMETER FIRST.');
const pathField = (what: string) => z.string().describe(`The **absolute** path to the ${what}.`);

/**
 * The sandbox tools the agent sees: `bash`, `ls`, `read_file`, `write_file`, `str_replace` and
 * `present_files`. Every tool returns `Error: <message>` text instead of throwing; arguments that
 * fail the schema are turned into an error tool message by LangGraph's `ToolNode`
 * (`handleToolErrors`, on by default). `present_files` answers with content and an artifact
 * `{ filepaths }`: the virtual paths it accepted, for the step that delivers them.
 */
export function createSandboxTools(options: SandboxToolsOptions): StructuredToolInterface[] {
  const { config } = options;
  const withContext = async (runConfig: RunnableConfig | undefined) => {
    const context = options.resolveContext(runConfig ?? {});
    await context.paths.ensure();
    return context;
  };

  const bash = tool(
    async ({ command }, runConfig) =>
      guard(runConfig, withContext, async (context) => {
        const { paths } = context;
        const sandbox = await sandboxFor(context, options.bubblewrap, config);
        const result = await runBash(command, {
          cwd: paths.workspaceDir,
          timeoutMs: config.bash_timeout_seconds * 1000,
          maxOutputChars: config.max_output_chars,
          env: buildSandboxEnv({
            baseEnv: options.baseEnv,
            homeDir: sandbox === undefined ? paths.workspaceDir : `${VIRTUAL_USER_DATA}/workspace`,
            perCallEnv: context.perCallEnv,
            isIsolated: sandbox !== undefined,
            passNames: config.pass_env,
          }),
          pathMapping: paths.mappings(),
          sandbox,
        });
        const output = mask(result.output === '' ? '(no output)' : result.output, context.maskedValues);
        if (result.isTimedOut) {
          return `Error: command timed out after ${config.bash_timeout_seconds} s and was killed. Run long-lived processes in the background (\`cmd > /mnt/user-data/workspace/cmd.log 2>&1 &\`).\n${output}`;
        }
        return result.exitCode === 0 ? output : `${output}\n[exit code ${result.exitCode ?? 'none (killed by a signal)'}]`;
      }),
    {
      name: 'bash',
      description:
        'Execute a bash command in /mnt/user-data/workspace. Use /mnt/user-data/outputs for files the user should get. Stdin is empty; start long-lived processes (servers) in the background with output redirected to a file.',
      schema: z.object({ description: descriptionField, command: z.string().describe('The bash command to execute.') }),
    },
  );

  const ls = tool(
    async ({ path }, runConfig) =>
      guard(runConfig, withContext, async ({ paths }) => {
        const resolved = await paths.resolveVirtual(path, { write: false });
        const info = await statOrExplain(resolved.hostPath, resolved.virtualPath);
        if (!info.isDirectory()) throw new SandboxError(`${showPath(resolved.virtualPath)} is not a directory`);
        const lines = await listTree(resolved.hostPath, resolved.virtualPath);
        return lines.length === 0 ? '(empty)' : lines.join('\n');
      }),
    {
      name: 'ls',
      description: 'List the contents of a directory up to 2 levels deep in tree format.',
      schema: z.object({ description: descriptionField, path: pathField('directory to list') }),
    },
  );

  const readFileTool = tool(
    async ({ path, start_line, end_line }, runConfig) =>
      guard(runConfig, withContext, async ({ paths }) => {
        const resolved = await paths.resolveVirtual(path, { write: false });
        let text = await readTextFile(resolved.hostPath, resolved.virtualPath);
        if (start_line !== undefined || end_line !== undefined) {
          const lines = text.split('\n');
          text = lines.slice((start_line ?? 1) - 1, end_line ?? lines.length).join('\n');
        }
        if (text.length > config.max_read_chars) {
          return `${text.slice(0, config.max_read_chars)}\n[... truncated at ${config.max_read_chars} of ${text.length} characters; read further with start_line/end_line ...]`;
        }
        return text === '' ? '(empty)' : text;
      }),
    {
      name: 'read_file',
      description: 'Read the contents of a text file. Use start_line and end_line to read part of a large file.',
      schema: z.object({
        description: descriptionField,
        path: pathField('file to read'),
        start_line: z.number().int().positive().optional().describe('First line to read (1-indexed, inclusive).'),
        end_line: z.number().int().positive().optional().describe('Last line to read (1-indexed, inclusive).'),
      }),
    },
  );

  const writeFileTool = tool(
    async ({ path, content, append }, runConfig) =>
      guard(runConfig, withContext, async ({ paths }) => {
        const resolved = await paths.resolveVirtual(path, { write: true });
        await fsStep(resolved.virtualPath, async () => {
          const created = await mkdir(dirname(resolved.hostPath), { recursive: true });
          await (append === true ? appendFile : writeFile)(resolved.hostPath, content, 'utf8');
          await paths.adopt(resolved.hostPath, created);
        });
        return 'OK';
      }),
    {
      name: 'write_file',
      description:
        'Write text to a file, creating parent directories. Overwrites the file unless append is true. Use str_replace for small edits.',
      schema: z.object({
        description: descriptionField,
        path: pathField('file to write to'),
        content: z.string().describe('The content to write.'),
        append: z.boolean().optional().describe('Append to the end of the file instead of overwriting. Default false.'),
      }),
    },
  );

  const strReplace = tool(
    async ({ path, old_str, new_str, replace_all }, runConfig) =>
      guard(runConfig, withContext, async ({ paths }) => {
        const resolved = await paths.resolveVirtual(path, { write: true });
        const shown = showPath(resolved.virtualPath);
        if (old_str === '') throw new SandboxError('old_str must not be empty');
        const text = await readTextFile(resolved.hostPath, resolved.virtualPath);
        const count = text.split(old_str).length - 1;
        if (count === 0) throw new SandboxError(`old_str not found in ${shown}`);
        if (count > 1 && replace_all !== true) {
          throw new SandboxError(
            `old_str occurs ${count} times in ${shown}; include more surrounding text to make it unique, or set replace_all`,
          );
        }
        await fsStep(resolved.virtualPath, () => writeFile(resolved.hostPath, text.split(old_str).join(new_str), 'utf8'));
        return 'OK';
      }),
    {
      name: 'str_replace',
      description:
        'Replace a substring in a file. old_str must occur exactly once unless replace_all is true.',
      schema: z.object({
        description: descriptionField,
        path: pathField('file to edit'),
        old_str: z.string().describe('The exact text to replace.'),
        new_str: z.string().describe('The replacement text.'),
        replace_all: z.boolean().optional().describe('Replace every occurrence instead of exactly one. Default false.'),
      }),
    },
  );

  const presentFiles = tool(
    async ({ filepaths }, runConfig): Promise<[string, { filepaths: string[] }]> => {
      const accepted: string[] = [];
      const content = await guard(runConfig, withContext, async ({ paths }) => {
        const refused: string[] = [];
        for (const filepath of filepaths) {
          try {
            const resolved = await paths.resolveVirtual(filepath, { write: false });
            if (resolved.area !== 'outputs') throw new SandboxError(`${showPath(filepath)} is not under /mnt/user-data/outputs`);
            const info = await statOrExplain(resolved.hostPath, resolved.virtualPath);
            if (!info.isFile()) throw new SandboxError(`${showPath(filepath)} is not a file`);
            accepted.push(resolved.virtualPath);
          } catch (error) {
            refused.push(explain(error, paths));
          }
        }
        if (accepted.length === 0) {
          throw new SandboxError(`no files presented. ${refused.join('; ')}`);
        }
        const ok = `Presented ${accepted.length} file(s): ${accepted.join(', ')}`;
        return refused.length === 0 ? ok : `${ok}. Refused: ${refused.join('; ')}`;
      });
      return [content, { filepaths: accepted }];
    },
    {
      name: 'present_files',
      description:
        'Make files visible to the user. Only files under /mnt/user-data/outputs can be presented; copy or write them there first.',
      schema: z.object({
        filepaths: z.array(z.string()).min(1).describe('Absolute paths of the files to present.'),
      }),
      responseFormat: 'content_and_artifact',
    },
  );

  return [bash, ls, readFileTool, writeFileTool, strReplace, presentFiles];
}

/** The bubblewrap invocation of one call, its mounts checked now; undefined when unsandboxed. */
async function sandboxFor(
  context: SandboxContext,
  setup: BubblewrapSetup | undefined,
  config: SandboxConfig,
): Promise<BashSandbox | undefined> {
  if (setup === undefined) return undefined;
  const args = bubblewrapArgs({
    mounts: await context.paths.mounts(),
    isNetworkEnabled: context.isNetworkEnabled ?? config.network,
    system: setup.system,
    user: setup.user,
    readOnlyPaths: config.read_only_paths,
    ...(setup.hidden === undefined ? {} : { hidden: setup.hidden }),
  });
  return { bwrapPath: setup.bwrapPath, args };
}

/** Replaces every secret value in `text` with `***` (a command may print its environment). */
function mask(text: string, values: readonly string[] | undefined): string {
  let masked = text;
  for (const value of values ?? []) if (value !== '') masked = masked.split(value).join('***');
  return masked;
}

/** Runs a tool body; any failure becomes `Error: <message>` text with host paths rewritten away. */
async function guard(
  runConfig: RunnableConfig | undefined,
  withContext: (config: RunnableConfig | undefined) => Promise<SandboxContext>,
  body: (context: SandboxContext) => Promise<string>,
): Promise<string> {
  let context: SandboxContext | undefined;
  try {
    context = await withContext(runConfig);
    return await body(context);
  } catch (error) {
    return `Error: ${explain(error, context?.paths)}`;
  }
}

/** A model-facing message for a failure; never contains a host path. */
function explain(error: unknown, paths: SandboxPaths | undefined): string {
  if (error instanceof SandboxError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  return paths === undefined ? 'the sandbox is not available for this thread' : hostToVirtual(message, paths.mappings());
}

const FS_ERRORS: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'has a parent that is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'is not accessible (permission denied)',
  EPERM: 'is not accessible (operation not permitted)',
  ENOSPC: 'cannot be written: no space left',
};

/** Runs a file-system step, turning Node's errors (which name host paths) into SandboxErrors. */
async function fsStep<T>(virtualPath: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const reason = code === undefined ? undefined : FS_ERRORS[code];
    throw new SandboxError(`${showPath(virtualPath)} ${reason ?? `could not be accessed (${code ?? 'unknown error'})`}`, {
      cause: error,
    });
  }
}

function statOrExplain(hostPath: string, virtualPath: string) {
  return fsStep(virtualPath, () => stat(hostPath));
}

async function readTextFile(hostPath: string, virtualPath: string): Promise<string> {
  const shown = showPath(virtualPath);
  const info = await statOrExplain(hostPath, virtualPath);
  if (info.isDirectory()) throw new SandboxError(`${shown} is a directory; use ls`);
  if (info.size > MAX_FILE_BYTES) {
    throw new SandboxError(`${shown} is too large (${info.size} bytes); use bash (head, sed -n) to read parts`);
  }
  const bytes = await fsStep(virtualPath, () => readFile(hostPath));
  if (bytes.includes(0)) throw new SandboxError(`${shown} is a binary file (${bytes.length} bytes)`);
  return bytes.toString('utf8');
}

/** Lines of a two-level tree under `hostDir`, named by virtual path; directories end in `/`. */
async function listTree(hostDir: string, virtualDir: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (host: string, virtual: string, depth: number): Promise<void> => {
    const entries = await fsStep(virtual, () => readdir(host, { withFileTypes: true }));
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (lines.length >= MAX_LS_ENTRIES) return;
      const child = `${virtual === '/' ? '' : virtual}/${entry.name}`;
      const isDir = entry.isDirectory(); // Symlinks are listed, never followed.
      lines.push(`${'  '.repeat(depth)}${child}${isDir ? '/' : ''}`);
      if (isDir && depth < 1) await walk(`${host}/${entry.name}`, child, depth + 1);
    }
  };
  await walk(hostDir, virtualDir, 0);
  if (lines.length >= MAX_LS_ENTRIES) lines.push(`[... listing stopped at ${MAX_LS_ENTRIES} entries ...]`);
  return lines;
}

/** The run's variables: string values under valid variable names only. */
function variablesOf(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => /^[A-Z_][A-Z0-9_]*$/.test(entry[0]) && typeof entry[1] === 'string'),
  );
}

/** Longer platform ids are not exported: the value comes from the caller and is informational. */
const MAX_CHANNEL_USER_ID_CHARS = 256;

/**
 * The usual `resolveContext`: thread from `configurable.thread_id` (required), user from
 * `configurable.user_id` (default `default`). Chat runs also carry the sender's raw platform id
 * (`configurable.channel_user_id`), exported to bash as `DEERFLOW_CHANNEL_USER_ID` for that call:
 * in a group thread it tells the senders apart. It is informational, never proof of identity.
 * The run's variables (`SANDBOX_VARIABLES_KEY`) and secrets (`SANDBOX_SECRETS_KEY`) are exported
 * too, the secrets masked in the output; a boolean under `SANDBOX_NETWORK_KEY` sets the network.
 *
 * @throws SandboxError when the run has no thread id or an id has unsafe characters.
 */
export function createContextResolver(options: {
  dataDir: string;
  skillsDir: string;
  /** The sandbox user when the server runs as root (see `SandboxPathsOptions.owner`). */
  owner?: SandboxUser | undefined;
}): (config: RunnableConfig) => SandboxContext {
  return (config) => {
    const threadId = config.configurable?.thread_id;
    const userId = config.configurable?.user_id ?? DEFAULT_USER_ID;
    const channelUserId = config.configurable?.channel_user_id;
    if (typeof threadId !== 'string') throw new SandboxError('the sandbox needs a thread; this run has none');
    if (typeof userId !== 'string') throw new SandboxError('invalid user id');
    const paths = new SandboxPaths({ dataDir: options.dataDir, skillsDir: options.skillsDir, userId, threadId, owner: options.owner });
    const perCallEnv: Record<string, string> = {};
    if (typeof channelUserId === 'string' && channelUserId !== '' && channelUserId.length <= MAX_CHANNEL_USER_ID_CHARS) {
      perCallEnv.DEERFLOW_CHANNEL_USER_ID = channelUserId;
    }
    const variables = variablesOf(config.configurable?.[SANDBOX_VARIABLES_KEY]);
    const secrets = variablesOf(config.configurable?.[SANDBOX_SECRETS_KEY]);
    const network = config.configurable?.[SANDBOX_NETWORK_KEY];
    return {
      paths,
      perCallEnv: { ...perCallEnv, ...variables, ...secrets },
      maskedValues: Object.values(secrets),
      ...(typeof network === 'boolean' ? { isNetworkEnabled: network } : {}),
    };
  };
}
