import { DWClient, type DWClientDownStream, TOPIC_ROBOT } from 'dingtalk-stream';
import WebSocket from 'ws';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { DINGTALK_LIMITS } from './limits.js';

export interface StreamConnectionOptions {
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  logger: Logger;
  /** Called for every robot message frame; must not throw (it is wrapped anyway). */
  onRobotMessage(frame: DWClientDownStream): void;
}

/**
 * `dingtalk-stream`'s client with the gateway taken from `api_url` (the SDK hard-codes
 * `https://api.dingtalk.com`; sdk-recipes §5 Recipe A) and refusals as `ChannelError`.
 */
class GatewayClient extends DWClient {
  constructor(private readonly gatewayUrl: string, opts: { clientId: string; clientSecret: string }) {
    super({ ...opts, keepAlive: false });
    // We reconnect ourselves, with jittered backoff (the SDK waits a fixed second).
    this.config.autoReconnect = false;
  }

  override async getEndpoint(): Promise<this> {
    let response: Response;
    try {
      response = await fetch(this.gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ clientId: this.config.clientId, clientSecret: this.config.clientSecret, ua: '', subscriptions: this.config.subscriptions }),
      });
    } catch (cause) {
      throw new ChannelError('dingtalk', 'CHANNEL_UNAVAILABLE', 'DingTalk gateway unreachable', { cause, status: 502 });
    }
    const body = (await response.json().catch(() => ({}))) as { endpoint?: string; ticket?: string; code?: string };
    if (!response.ok || !body.endpoint || !body.ticket) {
      const code = response.status === 401 || response.status === 403 || response.status === 400 ? 'CHANNEL_UNAUTHORIZED' : 'CHANNEL_UNAVAILABLE';
      throw new ChannelError('dingtalk', code, `DingTalk gateway refused the connection: HTTP ${response.status}${body.code ? ` ${body.code}` : ''}`, {
        status: 502,
        userMessage: code === 'CHANNEL_UNAUTHORIZED' ? 'DingTalk refused the client_id / client_secret.' : undefined,
      });
    }
    this.config.endpoint = body as unknown as string;
    (this as unknown as { dw_url: string }).dw_url = `${body.endpoint}?ticket=${body.ticket}`;
    return this;
  }

  /**
   * The SDK's `_connect`, without its console output, with the heartbeat timer tied to its own
   * socket (the SDK's outlives a reconnect and can terminate the next socket) and with malformed
   * frames dropped instead of thrown out of the socket's event handler.
   */
  override _connect(): Promise<void> {
    const internals = this as unknown as SdkInternals;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(internals.dw_url);
      internals.socket = socket;
      internals.userDisconnect = false;
      let isAlive = true;
      let heartbeat: ReturnType<typeof setInterval> | undefined;
      socket.on('open', () => {
        this.connected = true;
        heartbeat = setInterval(() => {
          if (!isAlive) return socket.terminate();
          isAlive = false;
          socket.ping();
        }, HEARTBEAT_INTERVAL_MS);
        resolve();
      });
      socket.on('pong', () => {
        isAlive = true;
      });
      socket.on('message', (data) => {
        isAlive = true;
        try {
          this.onDownStream(String(data));
        } catch {
          // Undocumented frames or bad JSON: nothing to answer.
        }
      });
      socket.on('close', () => {
        clearInterval(heartbeat);
        if (internals.socket === socket) {
          this.connected = false;
          this.registered = false;
        }
      });
      socket.on('error', (error) => {
        socket.terminate();
        reject(new ChannelError('dingtalk', 'CHANNEL_UNAVAILABLE', 'DingTalk stream connection failed', { cause: error, status: 502 }));
      });
    });
  }

  /** A SYSTEM `disconnect` asks the client to reconnect (platform-limits §5.2): close, and the close handler reconnects. */
  override onSystem(downstream: DWClientDownStream): void {
    super.onSystem(downstream);
    if (downstream.headers.topic === 'disconnect') this.webSocket?.close();
  }

  /** The SDK's `disconnect`, without its console output. */
  override disconnect(): void {
    const internals = this as unknown as SdkInternals;
    internals.userDisconnect = true;
    internals.socket?.close();
  }

  get webSocket(): WebSocket | undefined {
    return (this as unknown as SdkInternals).socket;
  }
}

/** `DWClient` fields that are private in its typings. */
interface SdkInternals {
  dw_url: string;
  socket?: WebSocket;
  userDisconnect: boolean;
}

/** The SDK's keep-alive: a websocket ping every 8 s; no pong by the next one ends the socket. */
const HEARTBEAT_INTERVAL_MS = 8000;

/** One Stream-mode connection, reconnected with jittered exponential backoff until `stop()`. */
export class StreamConnection {
  private readonly client: GatewayClient;
  private isStopped = true;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: StreamConnectionOptions) {
    this.client = new GatewayClient(`${options.apiUrl}/v1.0/gateway/connections/open`, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
    });
    this.client.registerCallbackListener(TOPIC_ROBOT, (frame) => {
      try {
        options.onRobotMessage(frame);
      } catch (error) {
        options.logger.error({ err: error }, 'DingTalk robot message handler threw');
      }
    });
  }

  /** Connects once; rejects with `ChannelError` when the gateway refuses the credentials. */
  async start(): Promise<void> {
    this.isStopped = false;
    await this.connectOnce();
  }

  stop(): void {
    this.isStopped = true;
    clearTimeout(this.timer);
    this.client.disconnect();
  }

  /** Acknowledges a callback so DingTalk does not redeliver it (there is no auto-ack for CALLBACK). */
  ack(streamMessageId: string): void {
    this.client.socketCallBackResponse(streamMessageId, { status: 'SUCCESS', message: 'OK' });
  }

  get isConnected(): boolean {
    return this.client.connected;
  }

  private async connectOnce(): Promise<void> {
    await this.client.getEndpoint();
    await this.client._connect();
    this.attempt = 0;
    this.client.webSocket?.once('close', () => this.scheduleReconnect());
  }

  private scheduleReconnect(): void {
    if (this.isStopped) return;
    const ceilingMs = Math.min(DINGTALK_LIMITS.reconnectMaxMs, DINGTALK_LIMITS.reconnectMinMs * 2 ** this.attempt);
    const delayMs = ceilingMs / 2 + Math.random() * (ceilingMs / 2);
    this.attempt++;
    this.options.logger.warn({ delayMs: Math.round(delayMs) }, 'DingTalk stream closed; reconnecting');
    this.timer = setTimeout(() => {
      if (this.isStopped) return;
      this.connectOnce().catch((error: unknown) => {
        this.options.logger.warn({ err: error }, 'DingTalk reconnect failed');
        this.scheduleReconnect();
      });
    }, delayMs);
  }
}
