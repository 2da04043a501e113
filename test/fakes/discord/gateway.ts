import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * The fake's gateway (`developers/events/gateway.mdx`), JSON encoding, no compression: HELLO,
 * IDENTIFY → READY + one GUILD_CREATE per guild, heartbeat ACKs, dispatches with sequence
 * numbers, RESUME → missed dispatches replayed + RESUMED, and Invalid Session (op 9) when a
 * session cannot be resumed. One bot session at a time, as for a single shard.
 */

export const OPCODES = { dispatch: 0, heartbeat: 1, identify: 2, resume: 6, reconnect: 7, invalidSession: 9, hello: 10, heartbeatAck: 11 } as const;

/** `GatewayIntentBits.MessageContent`, a privileged intent. */
const MESSAGE_CONTENT_INTENT = 1 << 15;

interface Dispatch {
  s: number;
  t: string;
  d: unknown;
}

export interface GatewayHooks {
  token: () => string;
  /** READY's `d` for a new session. */
  ready: (sessionId: string, resumeUrl: string) => Record<string, unknown>;
  /** GUILD_CREATE payloads sent after READY. */
  guilds: () => Record<string, unknown>[];
  resumeUrl: () => string;
  heartbeatIntervalMs: number;
  /** Refuse IDENTIFY asking for Message Content (1 << 15), as when the privileged intent is off. */
  refusesMessageContent: () => boolean;
  /** Called on every frame in either direction, for `waitFor`. */
  changed: () => void;
}

/** One gateway frame a client sent, or an event the fake noted. */
export interface GatewayEvent {
  kind: 'identify' | 'resume' | 'resumed' | 'invalid-session' | 'heartbeat' | 'dropped' | 'connected';
  at: number;
}

export class FakeGateway {
  readonly events: GatewayEvent[] = [];
  private readonly wss = new WebSocketServer({ noServer: true });

  /** Gateway websockets open now (a client that logged in again after a stop holds one, not two). */
  openConnections(): number {
    return [...this.wss.clients].filter((client) => client.readyState === client.OPEN).length;
  }
  private socket: WebSocket | undefined;
  private sessionId: string | undefined;
  private sessionCount = 0;
  private seq = 0;
  private log: Dispatch[] = [];
  /** While true, a socket that identified gets dispatches; false between a drop and a resume. */
  private isLive = false;

  constructor(private readonly hooks: GatewayHooks) {}

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  /** Whether a client is identified (or resumed) and receiving dispatches. */
  get isConnected(): boolean {
    return this.isLive;
  }

  /** Sends a dispatch now, or keeps it for a resume when the socket is down. */
  dispatch(t: string, d: unknown): void {
    if (this.sessionId === undefined) return;
    this.seq += 1;
    const event = { s: this.seq, t, d };
    this.log.push(event);
    if (this.isLive) this.send({ op: OPCODES.dispatch, ...event });
  }

  /** The payload of the latest dispatch of type `t` (e.g. to send a broken copy of a genuine one). */
  lastDispatch(t: string): unknown {
    return this.log.findLast((event) => event.t === t)?.d;
  }

  /** Cuts the TCP connection without a close frame: the session stays resumable. */
  dropSocket(): void {
    this.isLive = false;
    this.events.push({ kind: 'dropped', at: Date.now() });
    this.socket?.terminate();
    this.socket = undefined;
    this.hooks.changed();
  }

  /** Sends op 9 (`d: false`): the client must identify again; events meanwhile are lost. */
  invalidateSession(): void {
    this.sessionId = undefined;
    this.log = [];
    this.isLive = false;
    this.send({ op: OPCODES.invalidSession, d: false });
    this.events.push({ kind: 'invalid-session', at: Date.now() });
    this.hooks.changed();
  }

  async close(): Promise<void> {
    this.isLive = false;
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(ws: WebSocket): void {
    this.socket?.terminate();
    this.socket = ws;
    this.isLive = false;
    this.events.push({ kind: 'connected', at: Date.now() });
    ws.on('message', (raw) => this.receive(ws, raw.toString()));
    ws.on('close', () => {
      if (this.socket === ws) {
        this.socket = undefined;
        this.isLive = false;
      }
    });
    ws.send(JSON.stringify({ op: OPCODES.hello, d: { heartbeat_interval: this.hooks.heartbeatIntervalMs } }));
  }

  private receive(ws: WebSocket, raw: string): void {
    if (ws !== this.socket) return;
    const frame = JSON.parse(raw) as { op: number; d: Record<string, unknown> | number | null };
    const data = (frame.d ?? {}) as Record<string, unknown>;
    if (frame.op === OPCODES.heartbeat) {
      this.events.push({ kind: 'heartbeat', at: Date.now() });
      this.send({ op: OPCODES.heartbeatAck });
    } else if (frame.op === OPCODES.identify) {
      this.identify(ws, data);
    } else if (frame.op === OPCODES.resume) {
      this.resume(ws, data);
    }
    this.hooks.changed();
  }

  private identify(ws: WebSocket, data: Record<string, unknown>): void {
    this.events.push({ kind: 'identify', at: Date.now() });
    if (data.token !== this.hooks.token()) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    if (this.hooks.refusesMessageContent() && (Number(data.intents) & MESSAGE_CONTENT_INTENT) !== 0) {
      ws.close(4014, 'Disallowed intent(s).');
      return;
    }
    this.sessionCount += 1;
    this.sessionId = `sess-${this.sessionCount}`;
    this.seq = 0;
    this.log = [];
    this.isLive = true;
    this.dispatch('READY', this.hooks.ready(this.sessionId, this.hooks.resumeUrl()));
    for (const guild of this.hooks.guilds()) this.dispatch('GUILD_CREATE', guild);
  }

  private resume(ws: WebSocket, data: Record<string, unknown>): void {
    this.events.push({ kind: 'resume', at: Date.now() });
    if (data.token !== this.hooks.token() || data.session_id !== this.sessionId) {
      ws.send(JSON.stringify({ op: OPCODES.invalidSession, d: false }));
      return;
    }
    const since = typeof data.seq === 'number' ? data.seq : 0;
    for (const event of this.log.filter((e) => e.s > since)) this.send({ op: OPCODES.dispatch, ...event });
    this.isLive = true;
    this.events.push({ kind: 'resumed', at: Date.now() });
    this.dispatch('RESUMED', {});
  }

  private send(frame: Record<string, unknown>): void {
    if (this.socket?.readyState === 1) this.socket.send(JSON.stringify(frame));
  }
}
