import type { DynamicStructuredTool } from '@langchain/core/tools';
import { loadMcpTools } from '@langchain/mcp-adapters';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from './config.js';

/** One live session with an MCP server: its tools, as the adapter loaded them, by the server's own names. */
export interface McpConnection {
  tools: ReadonlyMap<string, DynamicStructuredTool>;
  /** Answers when the server still answers a ping within `timeoutMs`; rejects otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface McpConnectionEvents {
  /** The session ended without `close()`: the process exited, or the transport failed. */
  onLost(): void;
  /** A line the stdio server wrote to its stderr. */
  onStderr(line: string): void;
}

/** Non-text results are kept out of the text the model reads; `tools.ts` says they were there. */
const OUTPUT_HANDLING = { text: 'content', resource: 'content', resource_link: 'content', image: 'artifact', audio: 'artifact' } as const;

/**
 * Starts (stdio) or reaches (streamable HTTP) server `name`, greets it and lists its tools, all
 * within `connect_timeout_seconds`. Loaded only when `mcp_servers:` names a server: the SDK and
 * the adapter cost a start that has none nothing.
 *
 * @throws when the server cannot be started or reached, or does not finish the handshake in time.
 */
export async function openMcpConnection(name: string, config: McpServerConfig, events: McpConnectionEvents): Promise<McpConnection> {
  const client = new Client({ name: 'deerflow-channels', version: '0.1.0' });
  const transport = createTransport(config, events);
  let isClosing = false;
  const timeoutMs = config.connect_timeout_seconds * 1000;
  try {
    await client.connect(transport, { timeout: timeoutMs });
    const tools = await loadMcpTools(name, client, {
      // One tool with a schema the adapter cannot read must not cost the server's other tools.
      throwOnLoadError: false,
      outputHandling: OUTPUT_HANDLING,
      defaultToolTimeout: config.tool_timeout_seconds * 1000,
    });
    // Set only now: a server that fails its handshake is reported by the throw, not as lost.
    client.onclose = () => {
      if (!isClosing) events.onLost();
    };
    return {
      tools: new Map(tools.map((tool) => [tool.name, tool])),
      ping: async (pingTimeoutMs) => {
        await client.ping({ timeout: pingTimeoutMs });
      },
      close: async () => {
        isClosing = true;
        await client.close();
      },
    };
  } catch (error) {
    isClosing = true;
    await client.close().catch(() => undefined);
    throw withHttpStatus(error);
  }
}

/** The SDK's HTTP errors keep the status in `code`, out of their message: the operator needs it there. */
function withHttpStatus(error: unknown): unknown {
  if (!(error instanceof StreamableHTTPError) || error.code === undefined) return error;
  return new Error(`HTTP ${error.code}: ${error.message.replace(/^Streamable HTTP error: /, '')}`, { cause: error });
}

function createTransport(config: McpServerConfig, events: McpConnectionEvents): Transport {
  if (config.url !== undefined) {
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  }
  const transport = new StdioClientTransport({
    command: config.command as string,
    args: config.args,
    // The SDK adds PATH, HOME, USER, LOGNAME, SHELL and TERM from this process, nothing else.
    env: config.env,
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
    stderr: 'pipe',
  });
  let pending = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') events.onStderr(line);
  });
  return transport;
}
