import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** What the fake's tools saw: every call in arrival order, and the tools whose call was cancelled. */
export interface FakeMcpRecorder {
  calls: { name: string; args: unknown }[];
  /**
   * A tool's name, pushed when a call to it is cancelled: its request's signal aborts, on the
   * client's `notifications/cancelled` or when the session closes under it.
   */
  cancelled: string[];
}

/** The fake's server info, as the client sees it after `initialize`. */
export const FAKE_MCP_SERVER_INFO = { name: 'fake-orders', version: '1.0.0' } as const;

/** A valid 1x1 PNG of one red pixel, so image content survives decoders that check it. */
export const FAKE_MCP_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAADElEQVQImWP4z8AAAAMBAQCc479ZAAAAAElFTkSuQmCC';

/** The order database's outage message `fail` answers with, as a tool error (not a protocol error). */
export const FAKE_MCP_FAILURE_TEXT = 'the order database is offline';

/**
 * A real MCP server (the SDK's `McpServer`) with the tools the client integration is tested
 * against: one per kind of answer a tool can give (text, tool error, image, a long text, none
 * until cancelled) and `read_env`, which shows what environment a stdio server inherited.
 *
 * @param record filled as calls and cancellations happen; share one across sessions to see all.
 * @param onChange called after each change to `record`, so a fake's `waitFor` can re-check.
 */
export function buildFakeMcpServer(record: FakeMcpRecorder = { calls: [], cancelled: [] }, onChange: () => void = () => {}): McpServer {
  const server = new McpServer({ ...FAKE_MCP_SERVER_INFO });
  const called = (name: string, args: unknown): void => {
    record.calls.push({ name, args });
    onChange();
  };

  server.registerTool(
    'lookup_order',
    { description: 'Looks up an order by its id and tells its shipping status.', inputSchema: { order_id: z.string().describe('The order id, e.g. A-1001.') } },
    async (args) => {
      called('lookup_order', args);
      return { content: [{ type: 'text', text: `Order ${args.order_id}: shipped on 2026-11-30 via DHL.` }] };
    },
  );

  server.registerTool(
    'read_env',
    { description: "Reads one of the server process's environment variables.", inputSchema: { name: z.string().describe('The variable name.') } },
    async (args) => {
      called('read_env', args);
      const value = process.env[args.name];
      return { content: [{ type: 'text', text: value === undefined ? `${args.name} is not set` : `${args.name}=${value}` }] };
    },
  );

  server.registerTool('fail', { description: 'Always fails: the order database is offline.', inputSchema: {} }, async (args) => {
    called('fail', args);
    return { isError: true, content: [{ type: 'text', text: FAKE_MCP_FAILURE_TEXT }] };
  });

  server.registerTool('wait_forever', { description: 'Never answers; returns only once the call is cancelled.', inputSchema: {} }, async (args, extra) => {
    called('wait_forever', args);
    // Waiting on the signal alone holds no timer or handle, so a cancelled (or never-cancelled)
    // call never keeps the process alive. The SDK sends no answer for an aborted request.
    await new Promise<void>((resolve) => {
      const onAbort = (): void => {
        record.cancelled.push('wait_forever');
        onChange();
        resolve();
      };
      if (extra.signal.aborted) onAbort();
      else extra.signal.addEventListener('abort', onAbort, { once: true });
    });
    return { content: [{ type: 'text', text: 'cancelled' }] };
  });

  server.registerTool('picture', { description: 'Shows a picture of a red dot.', inputSchema: {} }, async (args) => {
    called('picture', args);
    return {
      content: [
        { type: 'image', data: FAKE_MCP_PNG_BASE64, mimeType: 'image/png' },
        { type: 'text', text: 'A red dot.' },
      ],
    };
  });

  server.registerTool(
    'big',
    { description: 'Answers with one text block of exactly `chars` characters.', inputSchema: { chars: z.number().int().nonnegative().describe('How many characters.') } },
    async (args) => {
      called('big', args);
      return { content: [{ type: 'text', text: 'x'.repeat(args.chars) }] };
    },
  );

  return server;
}
