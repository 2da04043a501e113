import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunnableConfig } from '@langchain/core/runnables';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { z } from 'zod';
import { encodeImageFile } from '../vision/encode.js';
import { type ImageReader, VIEW_IMAGE, type ViewedImage } from '../vision/shown-images.js';
import { type BashSandbox, hostToVirtual, runBash } from './bash.js';
import { bubblewrapArgs, type SandboxUser, type SystemEntry } from './bubblewrap.js';
import type { SandboxConfig } from './config.js';
import type { SandboxContext } from './context.js';
import { buildSandboxEnv } from './environment.js';
import { fsStep, listTree, readTextFile, statOrExplain } from './file-access.js';
import { SandboxError, type SandboxPaths, showPath, VIRTUAL_USER_DATA } from './paths.js';

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

const descriptionField = z
  .string()
  .describe('Explain why you are doing this in short words. ALWAYS PROVIDE THIS PARAMETER FIRST.');
const pathField = (what: string) => z.string().describe(`The **absolute** path to the ${what}.`);

/**
 * The sandbox tools the agent sees: `bash`, `ls`, `read_file`, `write_file`, `str_replace`,
 * `present_files` and `view_image` (offered only to models that see pictures). Every tool
 * returns `Error: <message>` text instead of throwing; arguments that fail the schema are turned
 * into an error tool message by LangGraph's `ToolNode` (`handleToolErrors`, on by default). `present_files` answers with content and an artifact
 * `{ filepaths }`: the virtual paths it accepted, for the step that delivers them; `view_image`
 * one `{ path }`, for the request that shows the picture (`withImagesShown`).
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

  const viewImage = tool(
    async ({ path }, runConfig): Promise<[string, ViewedImage | undefined]> => {
      let viewed: ViewedImage | undefined;
      const content = await guard(runConfig, withContext, async ({ paths }) => {
        const resolved = await paths.resolveVirtual(path, { write: false });
        // Read and decoded now, so a file that is not a picture is an error here, not in the next request.
        const image = await encodeImageFile(resolved.hostPath, resolved.virtualPath);
        viewed = { path: resolved.virtualPath };
        return `Showing ${resolved.virtualPath} (${image.width}×${image.height} as you see it) in the next message.`;
      });
      return [content, viewed];
    },
    {
      name: VIEW_IMAGE,
      description:
        'Look at a picture in your workspace (a PNG, JPEG, GIF or WebP you made, downloaded or were sent): it is shown to you right after this call. Pictures the user sends with a message are shown to you without it.',
      schema: z.object({ path: pathField('picture to look at') }),
      responseFormat: 'content_and_artifact',
    },
  );

  return [bash, ls, readFileTool, writeFileTool, strReplace, presentFiles, viewImage];
}

/**
 * Reads a picture at a virtual path of the run's thread, confined to its folders like every
 * file tool, and encodes it for a model (`encodeImage`).
 */
export function createImageReader(resolveContext: (config: RunnableConfig) => SandboxContext): ImageReader {
  return async (runConfig, virtualPath) => {
    const { paths } = resolveContext(runConfig);
    const resolved = await paths.resolveVirtual(virtualPath, { write: false });
    return encodeImageFile(resolved.hostPath, resolved.virtualPath);
  };
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
