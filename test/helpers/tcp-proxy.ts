import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL), to cut it off the way an outage
 * does: `cut()` resets every open connection and every new one until `restore()`.
 */
export class TcpProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private isCut = false;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  /** A started proxy in front of the server of `url`, and `url` pointed at the proxy instead. */
  static async inFrontOf(url: string, defaultPort: number): Promise<{ proxy: TcpProxy; url: string }> {
    const direct = new URL(url);
    const proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || defaultPort) });
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(await proxy.start());
    return { proxy, url: proxied.toString() };
  }

  /** Resolves with the port it listens on. */
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  cut(): void {
    this.isCut = true;
    for (const socket of this.sockets) socket.resetAndDestroy();
  }

  restore(): void {
    this.isCut = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.isCut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(this.target);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  }
}
