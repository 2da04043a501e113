import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A port on 127.0.0.1 nothing listens on: bound, then closed (a connection to it is refused). */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
