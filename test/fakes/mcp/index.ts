/**
 * A fake MCP server (`fake-orders`) on the official SDK, over streamable HTTP
 * (`FakeMcpHttpServer`) or as a stdio child process (`fakeMcpStdioLaunch()`), with the tools of
 * `./tools.ts`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Waiters } from '../waiters.js';
import { buildFakeMcpServer, type FakeMcpRecorder } from './tools.js';

export type { FakeMcpRecorder } from './tools.js';
export { buildFakeMcpServer, FAKE_MCP_FAILURE_TEXT, FAKE_MCP_PNG_BASE64, FAKE_MCP_SERVER_INFO } from './tools.js';

/**
 * How to start the stdio fake: `node --import <tsx's loader> <abs path of stdio.ts>`, both
 * absolute, so it runs from any working directory (a server's data folder, `/tmp`) without
 * `npx` or a `node_modules` nearby.
 */
export function fakeMcpStdioLaunch(): { command: string; args: string[] } {
  const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const entry = fileURLToPath(new URL('./stdio.ts', import.meta.url));
  return { command: process.execPath, args: ['--import', tsxLoader, entry] };
}

export interface FakeMcpHttpServerOptions {
  /** When set, every request without `authorization: Bearer <token>` gets 401. */
  bearerToken?: string;
}

/** One client session: its own transport and its own server, as the SDK's stateful pattern has it. */
interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A JSON-RPC error body with no id, as the SDK's transport answers requests it refuses. */
function sendRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

async function readText(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/**
 * A streamable HTTP MCP server on 127.0.0.1 at `/mcp`, stateful: each `initialize` starts a
 * session (a random id, its own transport and `McpServer`), later requests find it by their
 * `mcp-session-id`, and it ends with the client's DELETE or `stop()`. Many clients, one after
 * another or at once, each get their own. All sessions share `record`.
 *
 * Faults: `bearerToken` refuses requests without it (401), `setDown(true)` answers everything
 * 503 until `setDown(false)`.
 */
export class FakeMcpHttpServer {
  /** Every tool call and cancellation, across all sessions. */
  readonly record: FakeMcpRecorder = { calls: [], cancelled: [] };
  /** Every HTTP request, in arrival order, including refused ones. */
  readonly requests: { headers: IncomingHttpHeaders }[] = [];

  private readonly bearerToken: string | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly server: Server;
  private readonly waiters = new Waiters('FakeMcpHttpServer');
  private port: number | undefined;
  private down = false;

  constructor(options: FakeMcpHttpServerOptions = {}) {
    this.bearerToken = options.bearerToken;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendRpcError(res, 500, -32603, `Internal error: ${String(error)}`);
        else res.destroy();
      });
    });
  }

  /** `http://127.0.0.1:<port>/mcp`. Throws before `start()`. */
  get url(): string {
    if (this.port === undefined) throw new Error('FakeMcpHttpServer is not started');
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** How many sessions are open (initialized and not yet closed). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Listens on a free port. */
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Closes every session and the server, destroying open connections (SSE streams, hanging calls). */
  async stop(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map(({ server }) => server.close()));
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** While down, every request is answered 503, as during an outage; sessions survive it. */
  setDown(down: boolean): void {
    this.down = down;
  }

  /**
   * Resolves with the predicate's first truthy value, re-checked on every request, tool call and
   * cancellation (see `Waiters.waitFor`).
   */
  waitFor<T>(predicate: () => T | false | null | undefined, timeoutMs?: number): Promise<T> {
    return this.waiters.waitFor(predicate, timeoutMs);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requests.push({ headers: req.headers });
    this.waiters.notify();
    if (this.down) return sendJson(res, 503, { error: 'service_unavailable', message: 'fake-orders is down' });
    if (this.bearerToken !== undefined && req.headers.authorization !== `Bearer ${this.bearerToken}`) {
      return sendJson(res, 401, { error: 'invalid_token', message: 'Missing or invalid bearer token.' }, { 'www-authenticate': 'Bearer realm="fake-orders"' });
    }
    const path = new URL(req.url ?? '/', 'http://fake.invalid').pathname;
    if (path !== '/mcp') return sendJson(res, 404, { error: 'not_found' });

    // The body is read here (node:http has no body parser) and handed to the transport parsed.
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(await readText(req)) as unknown;
      } catch {
        return sendRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
      }
    }

    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      // 404 for a session that is unknown or over, as the spec asks, so a client starts anew.
      if (session === undefined) return sendRpcError(res, 404, -32001, 'Session not found');
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitializeRequest(body)) return this.startSession(req, res, body);
    sendRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
  }

  private async startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = buildFakeMcpServer(this.record, () => this.waiters.notify());
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
