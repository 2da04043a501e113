import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ScriptReply, type ScriptRequest, scriptedReply, type WireMessage } from './script.js';

/** The model id the demo answers to, as `/v1/models` lists it. */
export const DEMO_MODEL_ID = 'deerflow-demo';
/** Words in one streamed piece of text: a few, so the answer visibly grows. */
const WORDS_PER_CHUNK = 3;
/** Pause between streamed pieces: slow enough to watch, fast enough not to bore. */
const CHUNK_INTERVAL_MS = 60;
/** Largest request body read (a long conversation's memory extraction is the biggest). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface DemoModelOptions {
  /** What to answer; default the demo's script. */
  reply?: (request: ScriptRequest) => ScriptReply;
  /** Pause between streamed pieces, in ms; default {@link CHUNK_INTERVAL_MS}. */
  chunkIntervalMs?: number;
  now?: () => Date;
}

class BadRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadRequestError';
  }
}

/**
 * A scripted OpenAI-compatible endpoint on 127.0.0.1 (a free port), so the real agent, with its
 * real `@langchain/openai` client, runs without any model key: `POST /v1/chat/completions`
 * (streaming SSE and plain JSON, tool calls, usage) and `GET /v1/models`. It takes only its own
 * random bearer key, so no other program on the machine talks to it by accident.
 */
export class DemoModelServer {
  /** The bearer key the server's model config must carry. */
  readonly apiKey = `demo-${randomBytes(16).toString('hex')}`;
  private readonly server: Server;
  private readonly reply: (request: ScriptRequest) => ScriptReply;
  private readonly chunkIntervalMs: number;
  private readonly now: () => Date;
  private port: number | undefined;
  private callCount = 0;

  constructor(options: DemoModelOptions = {}) {
    this.reply = options.reply ?? scriptedReply;
    this.chunkIntervalMs = options.chunkIntervalMs ?? CHUNK_INTERVAL_MS;
    this.now = options.now ?? (() => new Date());
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (res.headersSent) res.destroy();
        else if (error instanceof BadRequestError) sendError(res, 400, error.message);
        else sendError(res, 500, 'the demo model failed');
      });
    });
  }

  /** `http://127.0.0.1:<port>/v1`, the model's `base_url`. Throws before `start()`. */
  get baseURL(): string {
    if (this.port === undefined) throw new Error('the demo model is not started');
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Listens on a free loopback port; resolves with {@link baseURL}. */
  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this.baseURL;
  }

  /** Closes the server and every open connection, streams in progress too. */
  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.authorization !== `Bearer ${this.apiKey}`) return sendError(res, 401, 'This endpoint is the demo model of deerflow-channels; it takes only its own key.', 'invalid_api_key');
    const path = req.url?.split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: DEMO_MODEL_ID, object: 'model', created: 0, owned_by: 'deerflow-channels demo' }] });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') return this.complete(req, res);
    sendError(res, 404, `Unknown route ${req.method} ${path}`, 'unknown_url');
  }

  private async complete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    const messages = Array.isArray(body.messages) ? (body.messages as WireMessage[]) : undefined;
    if (messages === undefined) throw new BadRequestError('messages: an array of chat messages is required');
    const toolNames = (Array.isArray(body.tools) ? body.tools : []).flatMap((entry) => {
      const name = (entry as { function?: { name?: unknown } } | null)?.function?.name;
      return typeof name === 'string' ? [name] : [];
    });
    const reply = this.reply({ messages, toolNames, now: this.now() });
    const answer = {
      id: `chatcmpl-demo-${++this.callCount}`,
      created: Math.floor(this.now().getTime() / 1000),
      model: typeof body.model === 'string' ? body.model : DEMO_MODEL_ID,
      text: 'text' in reply ? reply.text : '',
      toolCalls:
        'toolCalls' in reply
          ? reply.toolCalls.map((call, index) => ({
              // Unique per call: LangGraph skips a call whose id already has an answer in the thread.
              id: `call_demo_${this.callCount}_${index}_${randomBytes(3).toString('hex')}`,
              type: 'function' as const,
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            }))
          : [],
    };
    const promptChars = messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
    const completionChars = answer.text.length + JSON.stringify(answer.toolCalls).length;
    // About four characters a token, so the server's usage figures move with the conversation.
    const usage = { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil(completionChars / 4) };
    const finishReason = answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
    const withUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    if (body.stream === true) {
      const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      return this.stream(res, { ...answer, finishReason, usage: includeUsage ? withUsage : undefined });
    }
    const message = {
      role: 'assistant',
      content: answer.toolCalls.length > 0 && answer.text === '' ? null : answer.text,
      ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}),
    };
    sendJson(res, 200, {
      id: answer.id,
      object: 'chat.completion',
      created: answer.created,
      model: answer.model,
      choices: [{ index: 0, message, finish_reason: finishReason }],
      usage: withUsage,
    });
  }

  /** Server-sent events as OpenAI streams them: role, content pieces, tool calls, finish, usage, `[DONE]`. */
  private async stream(
    res: ServerResponse,
    answer: {
      id: string;
      created: number;
      model: string;
      text: string;
      toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
      finishReason: string;
      usage: Record<string, number> | undefined;
    },
  ): Promise<void> {
    const deltas: Record<string, unknown>[] = [{ role: 'assistant', content: answer.toolCalls.length > 0 && answer.text === '' ? null : '' }];
    for (const piece of textPieces(answer.text)) deltas.push({ content: piece });
    answer.toolCalls.forEach((call, index) => {
      deltas.push({ tool_calls: [{ index, id: call.id, type: call.type, function: { name: call.function.name, arguments: '' } }] });
      deltas.push({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const base = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model };
    const send = (data: object) => new Promise<void>((resolve, reject) => res.write(`data: ${JSON.stringify(data)}\n\n`, (error) => (error ? reject(error) : resolve())));
    for (const [index, delta] of deltas.entries()) {
      // The client went away (a cancelled run): nobody reads the rest.
      if (res.destroyed) return;
      if (index > 1 && 'content' in delta) await pause(this.chunkIntervalMs);
      await send({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
    }
    await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: answer.finishReason }] });
    if (answer.usage !== undefined) await send({ ...base, choices: [], usage: answer.usage });
    res.end('data: [DONE]\n\n');
  }
}

/** `text` in pieces of a few words each, spaces kept, so that joined they are `text` again. */
export function textPieces(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) pieces.push(words.slice(i, i + WORDS_PER_CHUNK).join(''));
  return pieces;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, message: string, code: string | null = null): void {
  sendJson(res, status, { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } });
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req) {
    size += (part as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BadRequestError('the request body is too large');
    parts.push(part as Buffer);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new BadRequestError('the request body is not a JSON object');
}
