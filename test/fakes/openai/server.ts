import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLoadScaledTimer } from '../../helpers/load-scaled-timer.js';

/** A tool call the fake model makes; `args` is sent JSON-encoded, in fragments when streaming. */
export interface FakeToolCall {
  name: string;
  args: Record<string, unknown>;
  /** Sent verbatim instead of `args`, e.g. broken JSON, as a misbehaving model would. */
  rawArguments?: string;
}

/** One scripted model answer. Every field is optional; `{}` answers with empty text. */
export interface FakeReply {
  /** Assistant text. Split into ~4-character deltas when streaming unless `chunks` is given. */
  text?: string;
  /** Explicit content deltas, sent in order. Their concatenation is the text; overrides `text`. */
  chunks?: string[];
  /** Tool calls after the text; each gets a fresh id `call_<n>_<random>`. */
  toolCalls?: FakeToolCall[];
  /** Reported usage. Default: ~4 characters per token of the prompt and of the answer. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Pause before each streamed chunk, in ms. Default 0. */
  chunkDelayMs?: number;
  /** Answer with this HTTP error (OpenAI's error shape) instead of a completion. */
  fail?: { status: number; message?: string };
  /** Streaming only: send this many content deltas, then destroy the socket mid-stream. */
  failAfterChunks?: number;
  /**
   * Streaming only: send this many content deltas, then end the response cleanly with neither a
   * `finish_reason` chunk, usage nor `data: [DONE]`, as a proxy or server that closes a stream
   * early does. To the client it looks like a normal end: only the missing finish reason tells.
   */
  endAfterChunks?: number;
}

/** A chat message as the client sent it. */
export interface FakeChatMessage {
  role: string;
  content: string | Array<{ type: string; text?: string }> | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

/** One recorded `POST /v1/chat/completions`; `body` is the full parsed JSON. */
export interface FakeChatRequest {
  model: string;
  messages: FakeChatMessage[];
  tools: unknown[] | undefined;
  stream: boolean;
  body: Record<string, unknown>;
}

/** Answers a request when the scripted queue is empty. */
export type FakeResponder = (request: FakeChatRequest) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAIOptions {
  /** When set, any other bearer key gets 401 `invalid_api_key`. A bearer key is always required. */
  apiKey?: string;
  /** Ids `GET /v1/models` lists and `GET /v1/models/:id` knows. Default `['gpt-4o-mini']`. */
  models?: string[];
  /**
   * Which model routes exist, as OpenAI-compatible servers differ: `all` (default, as OpenAI),
   * `list-only` (`GET /v1/models/:id` answers 404 `unknown_url`, as many servers do), or `none`.
   */
  modelRoutes?: 'all' | 'list-only' | 'none';
}

type Delta = Record<string, unknown>;

/** A message's text, its text parts joined; `''` for none. */
export function messageText(message: FakeChatMessage): string {
  if (message.content === null) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => part.text ?? '').join('');
}

/**
 * The request's size in tokens as an endpoint counts it, at ~4 characters a token: messages,
 * tool calls and tool definitions. Independent of the server's own estimate.
 */
export function requestTokens(request: FakeChatRequest): number {
  const characters = request.messages.reduce((sum, message) => sum + messageText(message).length + JSON.stringify(message.tool_calls ?? []).length, 0);
  return Math.ceil((characters + JSON.stringify(request.tools ?? []).length) / 4);
}

/**
 * OpenAI's rule for tool messages, or `undefined` when the messages keep it: every assistant
 * message with `tool_calls` is followed by one `tool` message per call, and every `tool` message
 * answers a call of the assistant message before it. The API refuses a request that breaks it.
 */
export function unpairedToolMessages(messages: readonly FakeChatMessage[]): string | undefined {
  let open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!open.delete(message.tool_call_id ?? '')) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
      continue;
    }
    if (open.size > 0) {
      return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.";
    }
    open = new Set((message.tool_calls ?? []).map((call) => call.id));
  }
  return open.size > 0 ? "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'." : undefined;
}

/** The last user message's text (text parts joined), or `''`. */
export function lastUserText(messages: FakeChatMessage[]): string {
  const user = messages.findLast((m) => m.role === 'user');
  return user ? messageText(user) : '';
}

/**
 * A responder that answers the last user text by how often it was asked (1-based `attempt`), for
 * faults where a message runs again (a crash, a takeover); `asked` holds the counts.
 */
export function answerByAttempt(answer: (question: string, attempt: number) => FakeReply): { respond: FakeResponder; asked: Map<string, number> } {
  const asked = new Map<string, number>();
  const respond: FakeResponder = (request) => {
    const question = lastUserText(request.messages);
    const attempt = (asked.get(question) ?? 0) + 1;
    asked.set(question, attempt);
    return answer(question, attempt);
  };
  return { respond, asked };
}

/** Default responder: `Echo: <last user message text>`. */
export const echoResponder: FakeResponder = (request) => ({ text: `Echo: ${lastUserText(request.messages)}` });

/** Rough token count (~4 characters per token, like OpenAI's rule of thumb), so usage moves with the text. */
function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function splitText(text: string, size = 4): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function errorBody(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
}

/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1 for the real `@langchain/openai`
 * client (sdk-recipes §7): streaming (SSE) and non-streaming completions, tool calls, usage,
 * scripted failures, and `GET /v1/models`. Script answers with `enqueue`; when the queue is
 * empty, `respond` answers (default: echo).
 */
export class FakeOpenAI {
  /** Every chat-completion request that passed auth, in arrival order. */
  readonly requests: FakeChatRequest[] = [];
  /** Every request for `GET /v1/models` or `GET /v1/models/:id`, as `GET /v1/models[/<id>]`, authorised or not, in arrival order. */
  readonly modelRequests: string[] = [];
  /** Answers when the queue is empty. Default {@link echoResponder}. */
  respond: FakeResponder = echoResponder;

  private readonly queue: FakeReply[] = [];
  private readonly waiters = new Set<() => void>();
  private modelRoutesHeld: Promise<void> | undefined;
  private readonly server: Server;
  private readonly options: FakeOpenAIOptions;
  private toolCallCount = 0;
  private responseCount = 0;
  private port: number | undefined;

  constructor(options: FakeOpenAIOptions = {}) {
    this.options = options;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, errorBody(String(error), 'server_error', null));
        else res.destroy();
      });
    });
  }

  /** `http://127.0.0.1:<port>/v1`, the client's `configuration.baseURL`. Throws before `start()`. */
  get baseURL(): string {
    if (this.port === undefined) throw new Error('FakeOpenAI is not started');
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Listens on a free port; resolves to `baseURL`. */
  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.baseURL;
  }

  /** Closes the server and every open connection, including streams in progress. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** Queues answers, used first-in first-out, one per chat-completion request. */
  enqueue(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /**
   * Resolves with `requests` once at least `count` have arrived.
   * @throws Error after `timeoutMs` (default 2000) stretched by the machine's load
   *   (`startLoadScaledTimer`), naming how many arrived.
   */
  waitForRequests(count: number, timeoutMs = 2000): Promise<FakeChatRequest[]> {
    if (this.requests.length >= count) return Promise.resolve(this.requests);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.requests.length < count) return;
        timer.cancel();
        this.waiters.delete(check);
        resolve(this.requests);
      };
      const timer = startLoadScaledTimer(timeoutMs, (waitedMs) => {
        this.waiters.delete(check);
        reject(new Error(`FakeOpenAI: expected ${count} requests within ${waitedMs} ms, got ${this.requests.length}`));
      });
      this.waiters.add(check);
    });
  }

  /**
   * Holds every model-route request (`GET /v1/models[/<id>]`) unanswered until the returned
   * function is called, so a test can see what arrives while a check is under way.
   */
  holdModelRoutes(): () => void {
    let release = () => {};
    this.modelRoutesHeld = new Promise<void>((resolve) => {
      release = () => {
        this.modelRoutesHeld = undefined;
        resolve();
      };
    });
    return release;
  }

  /**
   * Resolves with `modelRequests` once at least `count` have arrived.
   * @throws Error after `timeoutMs` (default 2000) stretched by the machine's load.
   */
  waitForModelRequests(count: number, timeoutMs = 2000): Promise<string[]> {
    if (this.modelRequests.length >= count) return Promise.resolve(this.modelRequests);
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.modelRequests.length < count) return;
        timer.cancel();
        this.waiters.delete(check);
        resolve(this.modelRequests);
      };
      const timer = startLoadScaledTimer(timeoutMs, (waitedMs) => {
        this.waiters.delete(check);
        reject(new Error(`FakeOpenAI: expected ${count} model requests within ${waitedMs} ms, got ${this.modelRequests.length}`));
      });
      this.waiters.add(check);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url?.split('?')[0] ?? '';
    const isModelRoute = req.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'));
    if (isModelRoute) {
      this.modelRequests.push(`GET ${decodeURIComponent(path)}`);
      for (const waiter of [...this.waiters]) waiter();
      await this.modelRoutesHeld;
    }
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ')) {
      return sendJson(res, 401, errorBody('Missing bearer API key.', 'invalid_request_error', null));
    }
    const presented = auth.slice('Bearer '.length);
    if (this.options.apiKey !== undefined && presented !== this.options.apiKey) {
      // As OpenAI does, the text repeats part of the key: the server must keep it out of its logs.
      const masked = `${presented.slice(0, 8)}${'*'.repeat(Math.max(0, presented.length - 12))}${presented.slice(-4)}`;
      const message = `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`;
      return sendJson(res, 401, errorBody(message, 'invalid_request_error', 'invalid_api_key'));
    }
    if (isModelRoute) {
      const { status, body } = this.modelsAnswer(path);
      return sendJson(res, status, body);
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') return this.complete(req, res);
    sendJson(res, 404, errorBody(`Unknown route ${req.method} ${path}`, 'invalid_request_error', 'unknown_url'));
  }

  /** `GET /v1/models[/<id>]`, as far as `modelRoutes` has them: the answer's status and body. */
  private modelsAnswer(path: string): { status: number; body: unknown } {
    const routes = this.options.modelRoutes ?? 'all';
    const known = this.options.models ?? ['gpt-4o-mini'];
    const describe = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'fake-openai' });
    if (path === '/v1/models' && routes !== 'none') return { status: 200, body: { object: 'list', data: known.map(describe) } };
    if (path !== '/v1/models' && routes === 'all') {
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      if (known.includes(id)) return { status: 200, body: describe(id) };
      return { status: 404, body: errorBody(`The model '${id}' does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found') };
    }
    return { status: 404, body: errorBody(`Unknown route GET ${path}`, 'invalid_request_error', 'unknown_url') };
  }

  private async complete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Record<string, unknown>;
    try {
      body = await readJson(req);
    } catch {
      return sendJson(res, 400, errorBody('Request body is not valid JSON.', 'invalid_request_error', null));
    }
    const request: FakeChatRequest = {
      model: String(body.model),
      messages: (body.messages ?? []) as FakeChatMessage[],
      tools: body.tools as unknown[] | undefined,
      stream: body.stream === true,
      body,
    };
    this.requests.push(request);
    for (const waiter of [...this.waiters]) waiter();
    const unpaired = unpairedToolMessages(request.messages);
    if (unpaired !== undefined) return sendJson(res, 400, errorBody(unpaired, 'invalid_request_error', null));

    const reply = this.queue.shift() ?? (await this.respond(request));
    if (reply.fail) {
      const { status, message = `Scripted failure ${status}` } = reply.fail;
      return sendJson(res, status, errorBody(message, status >= 500 ? 'server_error' : 'invalid_request_error', null));
    }
    const answer = this.buildAnswer(request, reply);
    if (request.stream) return this.stream(res, answer, reply);
    const hasToolCalls = answer.toolCalls.length > 0;
    const message = {
      role: 'assistant',
      content: hasToolCalls && answer.text === '' ? null : answer.text,
      ...(hasToolCalls ? { tool_calls: answer.toolCalls } : {}),
    };
    const { id, created, model, finishReason, usage } = answer;
    const choices = [{ index: 0, message, finish_reason: finishReason }];
    sendJson(res, 200, { id, object: 'chat.completion', created, model, choices, usage });
  }

  private buildAnswer(request: FakeChatRequest, reply: FakeReply) {
    const chunks = reply.chunks ?? splitText(reply.text ?? '');
    const text = chunks.join('');
    const toolCalls = (reply.toolCalls ?? []).map((call) => ({
      // Unique per call: LangGraph skips a tool call whose id already has a ToolMessage,
      // so a repeated id makes the next turn on the same thread loop (sdk-recipes §7).
      id: `call_${++this.toolCallCount}_${randomBytes(3).toString('hex')}`,
      type: 'function' as const,
      function: { name: call.name, arguments: call.rawArguments ?? JSON.stringify(call.args) },
    }));
    const promptText = request.messages.map(messageText).join('\n');
    const usage = reply.usage ?? {
      prompt_tokens: countTokens(promptText),
      completion_tokens: countTokens(text + toolCalls.map((c) => c.function.name + c.function.arguments).join('')),
    };
    return {
      id: `chatcmpl-${++this.responseCount}`,
      created: Math.floor(Date.now() / 1000),
      model: request.model,
      chunks,
      text,
      toolCalls,
      finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      includeUsage: (request.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
    };
  }

  private async stream(res: ServerResponse, answer: ReturnType<FakeOpenAI['buildAnswer']>, reply: FakeReply): Promise<void> {
    const deltas: Delta[] = [];
    if (answer.chunks.length > 0 || answer.toolCalls.length === 0) deltas.push({ content: '' });
    for (const content of answer.chunks) deltas.push({ content });
    answer.toolCalls.forEach((call, index) => {
      const header = { index, id: call.id, type: call.type, function: { name: call.function.name, arguments: '' } };
      deltas.push({ tool_calls: [header] });
      for (const fragment of splitText(call.function.arguments, 8)) {
        deltas.push({ tool_calls: [{ index, function: { arguments: fragment } }] });
      }
    });
    // The first delta carries the role; a tool-only turn starts with content null (sdk-recipes §7).
    deltas[0] = { role: 'assistant', content: null, ...deltas[0] };

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const base = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model };
    const send = async (data: object) => {
      if (reply.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, reply.chunkDelayMs));
      const line = `data: ${JSON.stringify(data)}\n\n`;
      // Wait for the flush so a following destroy() cannot drop what was already "sent".
      await new Promise<void>((resolve, reject) => res.write(line, (error) => (error ? reject(error) : resolve())));
    };

    let contentSent = 0;
    for (const delta of deltas) {
      await send({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
      if (typeof delta.content === 'string' && delta.content !== '') contentSent++;
      if (contentSent === reply.failAfterChunks || contentSent === reply.endAfterChunks) break;
    }
    if (reply.failAfterChunks !== undefined) {
      res.destroy(); // mid-stream: no finish_reason, no [DONE]
      return;
    }
    if (reply.endAfterChunks !== undefined) {
      res.end(); // a clean end, but no finish_reason, no usage, no [DONE]
      return;
    }
    await send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: answer.finishReason }] });
    if (answer.includeUsage) await send({ ...base, choices: [], usage: answer.usage });
    res.end('data: [DONE]\n\n');
  }
}
