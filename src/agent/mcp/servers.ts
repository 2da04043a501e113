import { createHash } from 'node:crypto';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { McpServerConfig, McpServersConfig } from './config.js';
import type { McpConnection } from './connection.js';
import { definitionKeyOf, MCP_TOOL_SEPARATOR, type McpToolCaller, toAgentTools } from './tools.js';

/** How one server is doing, for `/health` and the operator's log. */
export interface McpServerStatus {
  state: 'connecting' | 'ready' | 'failed';
  /** Tools the server offers (after a successful connection; 0 before). */
  tools: number;
  access: McpServerConfig['access'];
  /** Why the server is not ready, in a sentence (secrets masked). */
  reason?: string;
}

/** The MCP tools of one run, and what the run was meant to have but cannot use now. */
export interface McpToolSet {
  /** Identifies the tool definitions: runs with equal keys can share a compiled graph. */
  key: string;
  tools: StructuredToolInterface[];
  /** `<server>: <reason>` for each server the run may use whose tools are unavailable now. */
  unavailable: string[];
}

/** Who a run is for, as the routing decided it. */
export interface McpToolScope {
  /** The agent's `mcp_tools:` allow-list; undefined: every server's tools. */
  allowList?: readonly string[] | undefined;
  /** The sender may use `access: trusted` servers (`context.trusted_sender`). */
  isTrustedSender: boolean;
}

/** First retry after a failure, doubling up to `MAX_RETRY_MS` while the server stays down. */
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 5 * 60_000;
/** How long a server whose tool call failed oddly has to answer a ping before it is reconnected. */
const SUSPECT_PING_MS = 5_000;

const loadConnection = () => import('./connection.js');

/**
 * The configured MCP servers: each is connected in the background at start, reconnected with a
 * growing delay after it fails or its process exits, and offered to a run through its tools
 * while it is ready. A server that fails never stops the others, nor the run: the run is told
 * which tools it is missing and why.
 */
export class McpServers {
  private readonly links: McpServerLink[];

  constructor(config: McpServersConfig, logger: Logger) {
    this.links = Object.entries(config)
      .filter(([, server]) => server.enabled)
      .map(([name, server]) => new McpServerLink(name, server, logger.child({ component: 'mcp', server: name })));
  }

  get isEmpty(): boolean {
    return this.links.length === 0;
  }

  /** Starts connecting every server; returns at once. */
  start(): void {
    for (const link of this.links) link.start();
  }

  /**
   * The tools a run in `scope` gets. Waits for servers still on their first connection (bounded
   * by their `connect_timeout_seconds`), so the first runs after a start have their tools too.
   */
  async toolsFor(scope: McpToolScope): Promise<McpToolSet> {
    const permitted = this.links.filter((link) => link.config.access === 'everyone' || scope.isTrustedSender);
    const tools: StructuredToolInterface[] = [];
    const unavailable: string[] = [];
    for (const link of permitted) {
      const allowed = allowedToolsOf(link.name, scope.allowList);
      if (allowed === 'none') continue;
      await link.firstAttempt;
      const offered = link.tools.filter((tool) => allowed === 'all' || allowed.has(tool.name));
      if (link.status.state !== 'ready') unavailable.push(`${link.name}: ${link.status.reason ?? 'still connecting'}`);
      else tools.push(...offered);
    }
    const key = createHash('sha256')
      .update(tools.map(definitionKeyOf).join('\n'))
      .digest('base64url');
    return { key, tools, unavailable };
  }

  status(): Record<string, McpServerStatus> {
    return Object.fromEntries(this.links.map((link) => [link.name, link.status]));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.links.map((link) => link.close()));
  }
}

/** Which of server `name`'s tools an allow-list admits: entries are server names or `<server>__<tool>`. */
function allowedToolsOf(name: string, allowList: readonly string[] | undefined): 'all' | 'none' | ReadonlySet<string> {
  if (allowList === undefined || allowList.includes(name)) return 'all';
  const prefix = `${name}${MCP_TOOL_SEPARATOR}`;
  const tools = new Set(allowList.filter((entry) => entry.startsWith(prefix)));
  return tools.size === 0 ? 'none' : tools;
}

/** One configured server: its connection, its state, and the agent's tools that call it. */
class McpServerLink implements McpToolCaller {
  status: McpServerStatus;
  tools: StructuredToolInterface[] = [];
  firstAttempt: Promise<void> = Promise.resolve();
  private connection: McpConnection | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  private isClosed = false;
  private isSuspected = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly logger: Logger,
  ) {
    this.status = { state: 'connecting', tools: 0, access: config.access };
  }

  start(): void {
    this.firstAttempt = this.connect();
  }

  /** Tool `toolName` (the server's own name) on the live connection; undefined while there is none. */
  connectionTool(toolName: string) {
    return this.connection?.tools.get(toolName);
  }

  unavailableReason(): string {
    return this.status.reason ?? 'the server is not connected';
  }

  /**
   * A call failed in a way the server did not report as the tool's own error (a dropped session,
   * a timeout): if it does not answer a ping either, it is reconnected.
   */
  suspect(): void {
    const connection = this.connection;
    if (connection === undefined || this.isSuspected) return;
    this.isSuspected = true;
    connection
      .ping(SUSPECT_PING_MS)
      .then(
        () => undefined,
        (error: unknown) => {
          if (this.connection === connection) this.lose(`it stopped answering (${this.describe(error)})`);
        },
      )
      .finally(() => {
        this.isSuspected = false;
      });
  }

  async close(): Promise<void> {
    this.isClosed = true;
    clearTimeout(this.retryTimer);
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close();
  }

  private async connect(): Promise<void> {
    this.status = { state: 'connecting', tools: this.tools.length, access: this.config.access };
    let connection: McpConnection;
    try {
      const { openMcpConnection } = await loadConnection();
      connection = await openMcpConnection(this.name, this.config, {
        onLost: () => {
          if (this.connection === connection) this.lose('the server closed the connection');
        },
        onStderr: (line) => this.logger.debug({ stderr: this.mask(line.slice(0, 500)) }, 'MCP server wrote to stderr'),
      });
    } catch (error) {
      this.fail(`it could not be started or reached (${this.describe(error)})`);
      return;
    }
    if (this.isClosed) {
      await connection.close();
      return;
    }
    this.connection = connection;
    this.retryMs = FIRST_RETRY_MS;
    this.tools = toAgentTools(this.name, [...connection.tools.values()], this.config.max_output_chars, this, this.tools, this.logger);
    this.status = { state: 'ready', tools: this.tools.length, access: this.config.access };
    this.logger.info({ tools: this.tools.map((tool) => tool.name) }, 'MCP server ready');
  }

  private lose(reason: string): void {
    const connection = this.connection;
    this.connection = undefined;
    void connection?.close().catch(() => undefined);
    this.fail(reason);
  }

  private fail(reason: string): void {
    if (this.isClosed) return;
    this.status = { state: 'failed', tools: this.tools.length, access: this.config.access, reason };
    this.logger.warn({ reason, retryInSeconds: this.retryMs / 1000 }, 'MCP server unavailable; its tools are left out until it is back');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  /** An error's message with secrets masked: the configured header and env values, then known token shapes. */
  private describe(error: unknown): string {
    return this.mask(describeError(error).message).slice(0, 300);
  }

  private mask(text: string): string {
    let masked = text;
    for (const value of [...Object.values(this.config.headers), ...Object.values(this.config.env)]) {
      if (value.length >= 6) masked = masked.replaceAll(value, '[redacted]');
    }
    return masked;
  }
}
