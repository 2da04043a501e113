import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../../../src/agent/web/address-policy.js';
import { type GuardedFetchOptions, guardedFetch, WebFetchError } from '../../../../src/agent/web/guarded-fetch.js';

/** A real HTTP server on 127.0.0.1 that counts what reaches it. */
interface TestServer {
  port: number;
  origin: string;
  connections: number;
  requests: IncomingMessage[];
  openSockets: Set<Socket>;
  /** Called for every request after it is counted. */
  onRequest: ((request: IncomingMessage) => void) | undefined;
  close(): Promise<void>;
}

async function startServer(handler: (request: IncomingMessage, response: ServerResponse, self: TestServer) => void): Promise<TestServer> {
  const server: Server = createServer((request, response) => {
    self.requests.push(request);
    self.onRequest?.(request);
    handler(request, response, self);
  });
  const self: TestServer = {
    port: 0,
    origin: '',
    connections: 0,
    requests: [],
    openSockets: new Set(),
    onRequest: undefined,
    close: async () => {
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: Socket) => {
    self.connections++;
    self.openSockets.add(socket);
    // A client that stops reading (a cut body) resets the socket: expected, not a test failure.
    socket.on('error', () => undefined);
    socket.on('close', () => self.openSockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  try {
    await once(server, 'listening');
  } catch (error) {
    await self.close();
    throw error;
  }
  self.port = (server.address() as AddressInfo).port;
  self.origin = `http://127.0.0.1:${self.port}`;
  return self;
}

/** The failure `guardedFetch` rejects with; checks every message is free of host paths on the way. */
async function failureOf(url: string, options: GuardedFetchOptions): Promise<WebFetchError> {
  try {
    await guardedFetch(url, options);
  } catch (error) {
    expect(error).toBeInstanceOf(WebFetchError);
    const failure = error as WebFetchError;
    expect(failure.message).not.toContain(process.cwd());
    expect(failure.message).not.toMatch(/node_modules|\.[jt]s:\d|\/(home|root|work|tmp|usr|etc|proc)\/|\n\s+at /);
    return failure;
  }
  throw new Error(`${url} was fetched`);
}

const MB = 1024 * 1024;
const denyAll = new AddressPolicy({ allowNetworks: [] });
const allowLoopback = new AddressPolicy({ allowNetworks: ['127.0.0.1/32'] });
const base = { maxBytes: MB, timeoutMs: 10_000 } as const;

describe('guardedFetch with the default policy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((_request, response) => response.end('secret'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses a loopback IP literal before connecting', async () => {
    const error = await failureOf(`${server.origin}/`, { policy: denyAll, ...base });
    expect(error.failure).toBe('refused');
    expect(error.message).toBe(`${server.origin}/ is refused: 127.0.0.1 is a loopback address; the server does not fetch private networks`);
    expect(server.connections).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses localhost when its lookup gives loopback addresses, before connecting', async () => {
    const error = await failureOf(`http://localhost:${server.port}/`, { policy: denyAll, ...base });
    expect(error.failure).toBe('refused');
    expect(error.message).toMatch(new RegExp(`^http://localhost:${server.port}/ is refused: localhost resolves to (127\\.0\\.0\\.1|::1), a loopback address`));
    expect(server.connections).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses other schemes and credentials', async () => {
    expect((await failureOf('file:///etc/passwd', { policy: denyAll, ...base })).message).toContain('file: URLs are refused');
    expect((await failureOf(`http://user:pw@127.0.0.1:${server.port}/`, { policy: allowLoopback, ...base })).message).toContain('user name or password');
    expect(server.requests).toHaveLength(0);
  });

  it('calls text that is no URL invalid', async () => {
    const error = await failureOf('not a url', { policy: denyAll, ...base });
    expect(error.failure).toBe('invalid');
    expect(error.message).toBe("'not a url' is not a valid URL");
  });
});

describe('guardedFetch with 127.0.0.1/32 allowed', () => {
  let server: TestServer;
  const bigBody = Buffer.alloc(3 * MB, 'x');
  beforeAll(async () => {
    server = await startServer((request, response, self) => {
      const path = request.url ?? '/';
      const chain = /^\/chain\/(\d+)$/.exec(path);
      if (path === '/page') {
        response.writeHead(200, { 'content-type': 'Text/HTML; Charset="UTF-8"' });
        response.end('<p>hello</p>');
      } else if (path === '/plain') {
        response.end('no type');
      } else if (path === '/missing') {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('not here');
      } else if (path === '/hop1') {
        response.writeHead(302, { location: '/hop2' });
        response.end();
      } else if (path === '/hop2') {
        response.writeHead(301, { location: `${self.origin}/page` });
        response.end();
      } else if (chain !== null) {
        const left = Number(chain[1]);
        if (left === 0) {
          response.end('end of chain');
        } else {
          response.writeHead(307, { location: `/chain/${left - 1}` });
          response.end();
        }
      } else if (path === '/to-127.0.0.2') {
        response.writeHead(302, { location: `http://127.0.0.2:${self.port}/page` });
        response.end();
      } else if (path === '/to-metadata') {
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        response.end();
      } else if (path === '/to-file') {
        response.writeHead(302, { location: 'file:///etc/passwd' });
        response.end();
      } else if (path === '/big') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(bigBody);
      } else if (path === '/exact') {
        response.end(Buffer.alloc(1000, 'y'));
      } else if (path === '/hang') {
        // Never answers.
      } else {
        response.writeHead(500);
        response.end();
      }
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const allowed = { policy: allowLoopback, ...base };
  const requestsTo = (path: string) => server.requests.filter((request) => request.url === path);

  it('fetches a page, with its status, media type and charset', async () => {
    const page = await guardedFetch(`${server.origin}/page`, allowed);
    expect(page).toEqual({
      url: `${server.origin}/page`,
      status: 200,
      contentType: 'text/html',
      charset: 'utf-8',
      body: Buffer.from('<p>hello</p>'),
      truncated: false,
    });
    const [request] = requestsTo('/page');
    expect(request?.headers['user-agent']).toBe('deerflow-channels (+https://github.com/)');
    expect(request?.headers.accept).toBe('text/html,application/xhtml+xml,text/plain,application/json;q=0.9,*/*;q=0.5');
    // The per-call agent is gone: no connection stays open after the fetch.
    await expect.poll(() => server.openSockets.size).toBe(0);
  });

  it('sends the given User-Agent', async () => {
    await guardedFetch(`${server.origin}/plain`, { ...allowed, userAgent: 'test-agent/1' });
    expect(requestsTo('/plain').at(-1)?.headers['user-agent']).toBe('test-agent/1');
  });

  it("gives '' as the media type when the server names none", async () => {
    const page = await guardedFetch(`${server.origin}/plain`, allowed);
    expect(page.contentType).toBe('');
    expect(page.charset).toBeUndefined();
  });

  it('returns a 404 as a page with its status', async () => {
    const page = await guardedFetch(`${server.origin}/missing`, allowed);
    expect(page.status).toBe(404);
    expect(page.body.toString()).toBe('not here');
  });

  it('follows a chain of two redirects, a relative and an absolute one, and reports the final URL', async () => {
    const page = await guardedFetch(`${server.origin}/hop1`, allowed);
    expect(page.url).toBe(`${server.origin}/page`);
    expect(page.status).toBe(200);
    expect(page.body.toString()).toBe('<p>hello</p>');
  });

  it('follows maxRedirects redirects and refuses one more', async () => {
    expect((await guardedFetch(`${server.origin}/chain/5`, allowed)).body.toString()).toBe('end of chain');
    const before = requestsTo('/chain/0').length;
    const error = await failureOf(`${server.origin}/chain/6`, allowed);
    expect(error.failure).toBe('refused');
    expect(error.message).toContain('redirects more than 5 times');
    expect(requestsTo('/chain/0')).toHaveLength(before);
    expect((await failureOf(`${server.origin}/chain/2`, { ...allowed, maxRedirects: 1 })).message).toContain('more than 1 times');
  });

  it('refuses a redirect to another loopback address before connecting to it', async () => {
    const error = await failureOf(`${server.origin}/to-127.0.0.2`, allowed);
    expect(error.failure).toBe('refused');
    expect(error.message).toBe(`http://127.0.0.2:${server.port}/page is refused: 127.0.0.2 is a loopback address; the server does not fetch private networks`);
  });

  it('refuses a redirect to the cloud metadata address', async () => {
    const error = await failureOf(`${server.origin}/to-metadata`, allowed);
    expect(error.message).toContain('169.254.169.254 is a link-local address');
  });

  it('refuses a redirect to another scheme', async () => {
    expect((await failureOf(`${server.origin}/to-file`, allowed)).message).toContain('file: URLs are refused');
  });

  it('cuts a body at maxBytes and says so', async () => {
    const page = await guardedFetch(`${server.origin}/big`, allowed);
    expect(page.truncated).toBe(true);
    expect(page.body.length).toBeLessThanOrEqual(MB);
    expect(page.body.length).toBe(MB);
    expect(page.body.every((byte) => byte === 'x'.charCodeAt(0))).toBe(true);
    await expect.poll(() => server.openSockets.size).toBe(0);
  });

  it('does not call a body of exactly maxBytes truncated', async () => {
    const page = await guardedFetch(`${server.origin}/exact`, { ...allowed, maxBytes: 1000 });
    expect(page.truncated).toBe(false);
    expect(page.body.length).toBe(1000);
    const shorter = await guardedFetch(`${server.origin}/exact`, { ...allowed, maxBytes: 999 });
    expect(shorter.truncated).toBe(true);
    expect(shorter.body.length).toBe(999);
  });

  it('gives up on a server that never answers, saying after how long', async () => {
    const error = await failureOf(`${server.origin}/hang`, { ...allowed, timeoutMs: 300 });
    expect(error.failure).toBe('timeout');
    expect(error.message).toBe(`${server.origin}/hang took longer than 0.3 seconds to fetch and was abandoned`);
    await expect.poll(() => server.openSockets.size).toBe(0);
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    server.onRequest = (request) => {
      if (request.url === '/hang') controller.abort();
    };
    try {
      const error = await failureOf(`${server.origin}/hang`, { ...allowed, signal: controller.signal });
      expect(error.failure).toBe('cancelled');
      expect(error.message).toBe(`fetching ${server.origin}/hang was cancelled`);
    } finally {
      server.onRequest = undefined;
    }
    await expect.poll(() => server.openSockets.size).toBe(0);
  });

  it('does not start with a signal that has already aborted', async () => {
    const before = server.requests.length;
    const error = await failureOf(`${server.origin}/page`, { ...allowed, signal: AbortSignal.abort() });
    expect(error.failure).toBe('cancelled');
    expect(server.requests).toHaveLength(before);
  });
});

describe('guardedFetch network failures', () => {
  it('says a refused connection was refused, without the library text', async () => {
    // A port that was just free: nothing listens there once the server is closed.
    const closed = await startServer((_request, response) => response.end());
    await closed.close();
    const error = await failureOf(`${closed.origin}/`, { policy: allowLoopback, ...base });
    expect(error.failure).toBe('failed');
    expect(error.message).toBe(`${closed.origin}/ could not be fetched: the connection was refused`);
  });

  it('says a name that does not resolve does not resolve', async () => {
    const error = await failureOf('http://no-such-host.invalid/', { policy: denyAll, ...base });
    expect(error.failure).toBe('failed');
    expect(error.message).toContain('could not be fetched');
  });
});
