/**
 * The fake MCP server as a stdio child process (started through `fakeMcpStdioLaunch()`).
 *
 * Environment:
 * - `FAKE_MCP_FAIL_START=1`: writes one line to stderr and exits 1 before speaking MCP, as a
 *   server that fails to start (a bad install, a missing credential).
 * - `FAKE_MCP_EXIT_AFTER_CALLS=<n>`: exits 3 right after answering its n-th tool call, as a
 *   server that crashes mid-life.
 *
 * It exits 0 when stdin ends or closes: the client closing it, or a parent that died, never
 * leaves it running.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { buildFakeMcpServer } from './tools.js';

if (process.env.FAKE_MCP_FAIL_START === '1') {
  process.stderr.write('fake-orders: cannot start: FAKE_MCP_FAIL_START=1\n');
  process.exit(1);
}

// Listened to before connecting, so an end that comes early is not missed. Not while crashing:
// the exit code then is 3, once the last answer is out.
let crashing = false;
const exitOnStdinEnd = (): void => {
  if (!crashing) process.exit(0);
};
process.stdin.on('end', exitOnStdinEnd);
process.stdin.on('close', exitOnStdinEnd);

const exitAfterCalls = process.env.FAKE_MCP_EXIT_AFTER_CALLS === undefined ? undefined : Number(process.env.FAKE_MCP_EXIT_AFTER_CALLS);
if (exitAfterCalls !== undefined && !(Number.isInteger(exitAfterCalls) && exitAfterCalls > 0)) {
  throw new Error(`FAKE_MCP_EXIT_AFTER_CALLS must be a positive integer, not ${process.env.FAKE_MCP_EXIT_AFTER_CALLS}`);
}

const transport = new StdioServerTransport();
await buildFakeMcpServer().connect(transport);

if (exitAfterCalls !== undefined) {
  // Counted at the transport, whatever the tool returned: `connect` installed the server's
  // handler; wrap it to note the ids of tool calls, and wrap `send` to see their answers go out.
  const toolCallIds = new Set<string | number>();
  let answered = 0;
  const receive = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'tools/call' && 'id' in message) toolCallIds.add(message.id);
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    // Counted as the answer is handed over, not after it is written: pipelined calls answered
    // while the n-th still drains would otherwise get out too. Past the n-th, nothing goes out.
    if (crashing) return;
    const answersToolCall = !('method' in message) && 'id' in message && message.id !== undefined && toolCallIds.delete(message.id);
    if (answersToolCall) answered += 1;
    if (!answersToolCall || answered < exitAfterCalls) return send(message);
    crashing = true;
    await send(message);
    // The empty write's callback runs once everything before it reached the pipe.
    process.stdout.write('', () => process.exit(3));
  };
}
