import { createHash } from 'node:crypto';
import type { ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import type { Logger } from '../../logger.js';

/** Between a server's name and its tool's: `orders__lookup_order`. */
export const MCP_TOOL_SEPARATOR = '__';

/** Tool names as every provider accepts them (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
const MAX_TOOL_NAME = 64;

/** What an agent's MCP tool needs of its server's link; the link outlives its connections. */
export interface McpToolCaller {
  readonly name: string;
  readonly config: { tool_timeout_seconds: number };
  /** The adapter's tool on the live connection, by the server's own tool name; undefined while disconnected. */
  connectionTool(toolName: string): DynamicStructuredTool | undefined;
  unavailableReason(): string;
  /** A call failed oddly: check that the server still answers. */
  suspect(): void;
}

/** The tool definitions a compiled graph was built with: equal keys, equal definitions. */
const definitionKeys = new WeakMap<StructuredToolInterface, string>();

export function definitionKeyOf(tool: StructuredToolInterface): string {
  return definitionKeys.get(tool) ?? tool.name;
}

/**
 * The agent's tools for server `server`'s tools as the adapter loaded them: named
 * `<server>__<tool>`, returning text, calling whichever connection the server has when they are
 * called. A tool whose definition is unchanged since `previous` is the same object, so graphs
 * compiled with it stay valid across reconnections.
 */
export function toAgentTools(
  server: string,
  loaded: readonly DynamicStructuredTool[],
  maxOutputChars: number,
  caller: McpToolCaller,
  previous: readonly StructuredToolInterface[],
  logger: Logger,
): StructuredToolInterface[] {
  const previousByKey = new Map(previous.map((tool) => [definitionKeyOf(tool), tool]));
  const tools = new Map<string, StructuredToolInterface>();
  for (const source of loaded) {
    const name = agentToolName(server, source.name);
    if (tools.has(name)) {
      logger.warn({ tool: source.name, as: name }, 'MCP tool left out: its name clashes with another tool of the server once made safe for models');
      continue;
    }
    const key = createHash('sha256')
      .update(JSON.stringify([name, source.description, source.schema]))
      .digest('base64url');
    const tool = previousByKey.get(key) ?? createAgentTool(name, source, maxOutputChars, caller);
    definitionKeys.set(tool, key);
    tools.set(name, tool);
  }
  return [...tools.values()];
}

/** `<server>__<tool>` with what models refuse replaced, cut to 64 characters with a hash keeping it unique. */
export function agentToolName(server: string, tool: string): string {
  const name = `${server}${MCP_TOOL_SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME - hash.length - 1)}_${hash}`;
}

function createAgentTool(name: string, source: DynamicStructuredTool, maxOutputChars: number, caller: McpToolCaller): StructuredToolInterface {
  const toolName = source.name;
  return new DynamicStructuredTool({
    name,
    description: source.description,
    schema: source.schema,
    func: async (args: Record<string, unknown>, _runManager, config?: RunnableConfig) => {
      const target = caller.connectionTool(toolName);
      if (target === undefined) return `Error: ${name} is unavailable right now: the MCP server "${caller.name}" is down (${caller.unavailableReason()}).`;
      try {
        const message = (await target.invoke(
          { type: 'tool_call', id: 'mcp', name: toolName, args },
          { ...(config?.signal ? { signal: config.signal } : {}), metadata: { timeoutMs: caller.config.tool_timeout_seconds * 1000 } },
        )) as ToolMessage;
        return resultText(message, maxOutputChars);
      } catch (error) {
        // The run was cancelled: the tool call ends with it.
        if (config?.signal?.aborted) throw error;
        return failureText(name, caller, error);
      }
    },
  });
}

/** A tool's error in a sentence the model can pass on: the tool's own error, or why the server did not answer. */
function failureText(name: string, caller: McpToolCaller, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // The adapter reports a result marked `isError` (the tool's own failure) in these words.
  const toolError = /^MCP tool '.*' on server '.*' returned an error: ([\s\S]*)$/.exec(message);
  if (toolError) return `Error: ${name} failed: ${(toolError[1] ?? '').trim().slice(0, 1_000) || 'no reason given'}`;
  // Anything else is the server's or the session's failure: it may be gone.
  caller.suspect();
  if (/Request timed out/i.test(message)) {
    return `Error: the MCP server "${caller.name}" did not answer ${name} within ${caller.config.tool_timeout_seconds} s.`;
  }
  return `Error: the MCP server "${caller.name}" could not run ${name}; it may be down.`;
}

/** The text the model reads of a tool's result, at most `maxChars`, saying what was left out. */
function resultText(message: ToolMessage, maxChars: number): string {
  const parts: string[] = [];
  const content = message.content;
  if (typeof content === 'string') parts.push(content);
  else for (const block of content) parts.push(blockText(block as unknown as Record<string, unknown>));
  const hidden = Array.isArray(message.artifact) ? (message.artifact as { type?: unknown }[]).filter((item) => item.type === 'image' || item.type === 'audio') : [];
  if (hidden.length > 0) parts.push(`[the tool also returned ${hidden.length === 1 ? 'a picture or sound' : `${hidden.length} pictures or sounds`}, not shown here]`);
  const text = parts.filter((part) => part !== '').join('\n\n');
  if (text === '') return '(the tool returned nothing)';
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[... the result goes on; cut at ${maxChars} characters ...]`;
}

function blockText(block: Record<string, unknown>): string {
  if (block.type === 'text' && typeof block.text === 'string') return block.text;
  if (block.type === 'file') {
    const uri = (block.metadata as { uri?: unknown } | undefined)?.uri;
    if (block.source_type === 'text' && typeof block.text === 'string') return typeof uri === 'string' ? `[${uri}]\n${block.text}` : block.text;
    if (block.source_type === 'url' && typeof block.url === 'string') return `Link: ${block.url}`;
    return `[a file${typeof block.mime_type === 'string' ? ` (${block.mime_type})` : ''}, not shown here]`;
  }
  return `[a ${typeof block.type === 'string' ? block.type : 'content'} block, not shown here]`;
}
