import type { Server } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';

/**
 * Stops a fake that takes WebSocket upgrades on its HTTP server (`wss` in `noServer` mode):
 * cuts every socket in `sockets` without a closing handshake, as a platform that goes away
 * does, stops taking upgrades, then closes `server` with the connections it still holds. Resolves
 * once `server` is closed; at once when it is undefined (never started, or stopped already).
 */
export async function closeHttpWithWebSockets(server: Server | undefined, wss: WebSocketServer, sockets: Iterable<WebSocket>): Promise<void> {
  for (const socket of sockets) socket.terminate();
  wss.close();
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
