import type { FastifyPluginAsync } from 'fastify';
import type { z } from 'zod';
import type { Logger } from '../logger.js';
import type { HostedChats } from './hosted-chats.js';
import type { IntervalBudget } from './interval-budget.js';
import type { RateGate } from './rate-gate.js';
import type { Topic } from './topic.js';

/**
 * The contract between core and a platform. Core never learns which platform it talks to:
 * every difference is data in `ChannelCapabilities` or behaviour behind `ChannelEgress`.
 */

/** How a platform shows a reply while the model is still writing it. */
export type StreamingStyle =
  /** The platform streams natively (Slack `chat.appendStream`, Telegram drafts). */
  | 'native'
  /** One card updated in place (Feishu CardKit, DingTalk AI card). */
  | 'card'
  /** One message edited in place (Telegram, Discord, Slack `chat.update`). */
  | 'edit'
  /** Only the final answer is sent (GitHub comments). */
  | 'none';

export interface ChannelCapabilities {
  streaming: StreamingStyle;
  /**
   * How often the manager hands a streaming reply its text so far, in ms: at most this often,
   * or sooner once 60 new characters arrived (reference §4.7 A). Default 1000, what a platform's
   * edit limits allow. 0 hands over every token (the web chat, whose egress paces itself).
   */
  minPartialIntervalMs?: number;
  /** The longest single message the platform accepts, in characters; longer replies are split. */
  maxMessageChars: number;
  /** The platform has its own threads (Slack, Discord, Feishu topics) that replies go into. */
  hasThreads: boolean;
  /** File transfer, in bytes; 0 means the direction is not supported. */
  files: { maxInboundBytes: number; maxOutboundBytes: number };
  /** What the bot reacts to in group chats. */
  groupTrigger: 'every-message' | 'mention' | 'configurable';
  /** How the manager runs the agent for this platform's messages. */
  runMode: 'stream' | 'wait' | 'fire_and_forget';
  /**
   * False for platforms whose messages are not people chatting (GitHub events): the identity gate
   * of `channel_connections` is skipped and ingress names the owner (reference §4.6 run policy).
   * Default true.
   */
  requiresBoundIdentity?: boolean;
  /**
   * Reference §4.6–4.7 (Feishu): a message for a thread that is answering another waits its turn
   * (the reply shows it is queued) instead of being refused as busy. Default false.
   */
  serializesThreadRuns?: boolean;
  /**
   * Reference §6.0: a sender with no binding in the message's workspace is looked up once more
   * without a workspace (Discord: someone who bound in a DM, writing in a server). Default false.
   */
  identityFallsBackToNoWorkspace?: boolean;
  /**
   * False where nobody answers a question (GitHub events): the agent gets no clarification tool.
   * Default true (reference §4.6 `is_interactive`).
   */
  interactive?: boolean;
  /** The least recursion limit of this platform's runs (GitHub: 250); a message may set its own. */
  defaultRecursionLimit?: number;
  /**
   * `fire_and_forget` only: a message arriving while its thread is busy is kept (in the database)
   * and delivered with the others as one turn once the thread is free (reference §4.10), instead
   * of being turned away.
   */
  buffersFollowUps?: boolean;
}

/**
 * Where a reply goes, in the platform's own ids. Made by ingress, carried through the bus as
 * plain data (so another process can deliver it), read only by the same platform's egress.
 */
export interface ReplyAnchor {
  /** The platform message being answered (reply-to target, thread root). */
  messageId?: string;
  /** A placeholder ingress already posted ("Working on it..."), to be turned into the reply. */
  placeholderId?: string;
}

export type InboundKind = 'chat' | 'command';

/** One message from a person, normalized by ingress (reference §1.2). */
export interface InboundMessage {
  /** Platform name, e.g. `telegram`; routes the reply back to the same adapter. */
  channel: string;
  chatId: string;
  /** Conversation key suffix inside a chat; absent = one conversation per chat (reference §3.3). */
  topicId?: string;
  /** The sender's platform id. */
  userId: string;
  /**
   * True when the channel's `allowed_users` names the sender; false when the list is empty and
   * anyone may write. Trusted senders get shell access (`sandbox.bash_access: trusted`).
   */
  senderIsAllowlisted?: boolean;
  /** Team, guild or tenant scope; part of the dedupe key (reference §4.2). */
  workspaceId?: string;
  /** The platform's stable id for this message; absent = cannot be deduplicated. */
  messageId?: string;
  text: string;
  kind: InboundKind;
  isPrivateChat: boolean;
  replyTo: ReplyAnchor;
  /** Milliseconds since the epoch, when ingress received it. */
  receivedAt: number;
  /** Files attached to the message; their bytes are fetched by the worker through `ChannelFiles`. */
  files?: InboundFile[];
  /**
   * The server account the message runs as. On platforms that bind chat identities it is set by
   * the manager's identity gate, never by ingress; where `requiresBoundIdentity` is false (GitHub)
   * ingress sets it to the agent's owner.
   */
  ownerUserId?: string;
  /** The binding the identity gate found (set by the manager). */
  connectionId?: string;
  /** The thread to use when the conversation has none yet (a deterministic id, e.g. GitHub's uuid5). */
  preferredThreadId?: string;
  /** The custom agent (`agents/<name>/`) that answers; absent = the default agent. */
  agentName?: string;
  /** This message's recursion limit, used as is (a GitHub agent's `recursion_limit`). */
  recursionLimit?: number;
  /**
   * How often this message's turn has been taken up again after the process answering it died
   * (issue #15); absent the first time. Set by core, never by ingress.
   */
  resumes?: number;
  /**
   * Set by core's scheduler, never by ingress: the message is an occurrence of a schedule
   * (issue #17). It runs on the schedule's own thread, with nobody there to answer a question,
   * and its reply is a new message in the chat.
   */
  scheduled?: { scheduleId: string; threadId: string };
  /**
   * Plain data ingress keeps for the same platform's adapter (GitHub: installation id, what to
   * react to). Carried through the bus and the follow-up buffer; core never reads it.
   */
  platformData?: Readonly<Record<string, JsonValue>>;
}

/** What survives a trip through JSON unchanged (the bus, the database). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A file someone sent, as ingress saw it. Only a reference travels through the bus: the worker
 * downloads the bytes (so a queued message stays small and a Redis bus never carries files).
 */
export interface InboundFile {
  /** Suggested file name; untrusted, core sanitizes it before it touches the disk. */
  name: string;
  mimeType: string;
  isImage: boolean;
  /** Size the platform declared, in bytes, when it did. */
  declaredSize?: number;
  /** The platform's handle (Telegram `file_id`). Opaque to core; never logged or shown to the agent. */
  ref: string;
}

/** A file the agent presented, resolved to a regular file inside the thread's outputs. */
export interface OutboundFile {
  /** Absolute host path; read it, never show it. */
  hostPath: string;
  /** Base name the user sees. */
  name: string;
  mimeType: string;
  isImage: boolean;
  size: number;
}

/** File transfer in both directions; absent on platforms without files. */
export interface ChannelFiles {
  /**
   * Downloads an inbound file, enforcing the platform's size limit on the declared size, the
   * size the platform resolves and the bytes received. Rejects with a `ChannelError` coded
   * `FILE_TOO_LARGE` or `FILE_UNAVAILABLE` whose `userMessage` is the short reason users see.
   */
  download(file: InboundFile, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * Sends one file into the conversation after the final text. Rejects with a `ChannelError`
   * (`FILE_TOO_LARGE` when over the platform's limit: the file is skipped, not shortened).
   */
  send(target: ReplyTarget, file: OutboundFile): Promise<void>;
}

/** Everything egress needs to deliver one reply; derived from the inbound message. */
export interface ReplyTarget {
  chatId: string;
  topicId?: string;
  isPrivateChat: boolean;
  replyTo: ReplyAnchor;
  /** Who asked, in the platform's ids: Slack streams into a channel only when it names the recipient. */
  recipient?: { userId: string; workspaceId?: string };
  /** The message's `platformData`, for the same platform's egress. */
  platformData?: Readonly<Record<string, JsonValue>>;
}

/** One reply being delivered, from the first partial to the final text. */
export interface Reply {
  /**
   * Show partial text. Returns at once; the egress coalesces updates (latest wins) and may drop
   * partials to stay inside the platform's rate limits. Never throws.
   */
  update(text: string): void;
  /**
   * Deliver the final text, split to the platform's limits. Resolves once delivered; rejects with
   * a `ChannelError` when it could not be, after the retries the platform allows. `outcome` says
   * whether the request failed (the text is then an error message), for platforms that mark the
   * user's message with a result (Slack's ✅ / ❌); absent = not known, treat as success.
   */
  finish(text: string, outcome?: ReplyOutcome): Promise<void>;
  /**
   * Stops the reply without a final: partials still waiting are dropped and nothing more is sent
   * (a `finish` after it sends nothing). For a turn another process took over, which answers into
   * the same message. Absent: the reply holds nothing back that could go out later.
   */
  abandon?(): void;
  /**
   * Where a final sent later (by the outbox, after this reply failed to deliver it) continues
   * this reply: the message that shows it now, to be finished in place. Absent = the target's
   * own anchor.
   */
  resumeAnchor?(): ReplyAnchor;
  /**
   * After `finish` rejected: what of the final is not on screen yet and where it continues,
   * so a later attempt sends only that, after the parts shown. `undefined` when nothing of the
   * final is on screen (send all of it again at `resumeAnchor()`). Absent = not known, same.
   */
  finalLeft?(): FinalLeft | undefined;
}

/** The rest of a final split into several messages that was delivered only in part. */
export interface FinalLeft {
  /** The final from the first part not shown on; '' when every part is. */
  text: string;
  /**
   * Where the rest continues: new messages after the last part shown, never an edit of it (so
   * no `placeholderId`). `messageId` is that part where the platform's parts reply to one
   * another, else the message the reply answers.
   */
  anchor: ReplyAnchor;
}

/** How the request a reply answers went. */
export interface ReplyOutcome {
  failed: boolean;
  /**
   * The reply is the agent's question to the person (the turn ended with `ask_clarification`):
   * their next message answers it. Platforms whose next message would otherwise start a new
   * conversation (a Feishu group) keep it in this one (reference §6.4).
   */
  awaitsAnswer?: boolean;
}

export interface ChannelEgress {
  reply(target: ReplyTarget): Reply;
}

export interface ChannelStatus {
  running: boolean;
  /** Another process of the deployment runs this channel's ingress; this one delivers replies. */
  standby?: boolean;
  /** Why it is not running; secret-free. */
  reason?: string;
}

/**
 * What a platform adds around the runs of its messages. Both are optional and best effort: a
 * failure is the adapter's to log, never the run's to suffer.
 */
export interface ChannelRunHooks {
  /**
   * Environment variables for this run's shell commands only (GitHub: an installation token as
   * `GH_TOKEN`, the Enterprise host as `GH_HOST`). Secrets are never stored, shown to the model
   * or logged, and are masked in command output. Never rejects.
   */
  sandboxEnvironment?(message: InboundMessage): Promise<SandboxEnvironment>;
  /** A run for `messages` was admitted (several when buffered follow-ups run as one turn). Never throws. */
  runStarted?(messages: readonly InboundMessage[]): void;
}

/** Per-run variables for the sandbox's shell. */
export interface SandboxEnvironment {
  secrets?: Record<string, string>;
  variables?: Record<string, string>;
}

export interface ChannelAdapter {
  readonly name: string;
  /** The platform's name as users read it, e.g. `Telegram`, `DingTalk`. */
  readonly displayName: string;
  readonly capabilities: ChannelCapabilities;
  readonly egress: ChannelEgress;
  readonly files?: ChannelFiles;
  /**
   * Ingress is the bot's one connection (Telegram long polling: a second poller is refused; the
   * Discord gateway: a second session gets every event again). With several processes only the
   * one holding the channel's lease runs it. Default false: the platform spreads events over
   * several connections (Slack Socket Mode, Feishu, DingTalk) or sends them by webhook.
   */
  readonly exclusiveIngress?: boolean;
  /** Starts ingress (polling, sockets). Rejects with a `ChannelError` when the platform refuses us. */
  start(): Promise<void>;
  /** Stops ingress; in-flight acknowledgements finish first. */
  stop(): Promise<void>;
  status(): ChannelStatus;
  /** Webhook routes, mounted at `/api/webhooks/<name>`. Public: a webhook proves itself by its platform's signature. */
  routes?: FastifyPluginAsync;
  /**
   * Routes people call with their own API key (the web chat), mounted at `/api/channels/<name>`.
   * The gateway's access rule holds for them as for the rest of the API: `request.principal` is
   * the caller, and without one the request is refused whenever the server requires keys.
   */
  personRoutes?: FastifyPluginAsync;
  runHooks?: ChannelRunHooks;
}

/** Taken by ingress before it acknowledges a message, so a full queue refuses before any ack. */
export interface InboundReservation {
  /**
   * Hands the message to the workers; resolves once it is accepted (in Redis, when the bus is,
   * so it survives this process). Rejects if the reservation was invalidated by shutdown, or the
   * queue could not take it.
   */
  commit(message: InboundMessage): Promise<void>;
  /** Gives the slot back; idempotent. */
  release(): void;
}

export interface InboundIntake {
  /**
   * Never waits for capacity: resolves with a slot or rejects at once with
   * `AppError('INBOUND_QUEUE_FULL' | 'INBOUND_QUEUE_CLOSED')`.
   */
  reserve(): Promise<InboundReservation>;
  /**
   * Whether a `reserve` now would find room: asked by a push transport before it acknowledges an
   * event, so a platform that sends it again gets a refusal instead of the person a busy notice.
   * A hint only (admission may still be refused); false when the intake cannot tell. Absent: the
   * intake never tells, and refusals are found at admission.
   */
  hasRoom?(): Promise<boolean>;
}

/** A chat command as platforms list it in their command menus. */
export interface CommandInfo {
  /** Lowercase, without `/`. */
  name: string;
  description: string;
}

/** A chat identity, as the platform names it (reference §8.1 table). */
export interface ChatIdentity {
  externalAccountId: string;
  /** The scope a binding holds in: Telegram binds per chat, Slack per team; absent = none. */
  workspaceId?: string;
}

/** A connect code someone sent in a chat, with what the platform knows about them. */
export interface ChatBindRequest {
  identity: ChatIdentity;
  /** As typed; core never logs or echoes it. */
  code: string;
  accountName?: string;
  workspaceName?: string;
  metadata?: Record<string, unknown>;
}

/**
 * Binds chat identities to server accounts (reference §5.3, §8.1). Adapters call it before
 * `allowed_users`, so a person not yet allow-listed can bind; they send back the reply text.
 */
export interface ChatBinder {
  /** Consumes the code and binds; resolves with the reply to show in the chat. Never throws. */
  bind(provider: string, request: ChatBindRequest): Promise<string>;
}

/** What {@link WebhookDeliveries.begin} found for a delivery id. */
export type DeliveryClaim =
  /** Ours to run: never seen, or seen and failed (or stuck mid-way in a process that died). */
  | { kind: 'new' }
  /** Already ran to the end; `summary` is what was answered then. */
  | { kind: 'done'; summary: Record<string, unknown> }
  /** Another request is running it right now. */
  | { kind: 'in_progress' };

/**
 * A platform's webhook deliveries by the platform's delivery id, in the database, so a redelivery
 * of one that went through is answered without running again and one that failed runs again.
 */
export interface WebhookDeliveries {
  /**
   * Claims `deliveryId` atomically: two concurrent requests with one id never both get `new`. A
   * claim still `processing` after `staleAfterMs` (default ten minutes) belonged to a process that
   * died, and is taken over.
   */
  begin(deliveryId: string, event: string, options?: { staleAfterMs?: number }): Promise<DeliveryClaim>;
  /** Marks it done, with the summary a redelivery is answered with. */
  finish(deliveryId: string, summary: Record<string, unknown>): Promise<void>;
  /** Marks it failed, so its redelivery runs again. */
  fail(deliveryId: string): Promise<void>;
}

/**
 * Small durable state of one platform's adapter (Discord: the thread it opened for a channel
 * message), in the database: it survives restarts and every process sees it. Values are JSON.
 */
export interface ChannelStateStore {
  get(key: string): Promise<JsonValue | undefined>;
  set(key: string, value: JsonValue): Promise<void>;
  /** Stores `value` unless the key has one; resolves with what is stored now (the first writer wins). */
  setIfAbsent(key: string, value: JsonValue): Promise<JsonValue>;
  delete(key: string): Promise<void>;
}

/**
 * A sliding-window request budget: at most `perWindow` requests per key in any `windowMs`, each
 * counted from its start until `windowMs` after it ended (so the platform, which counts arrivals,
 * never sees more, however slow requests are). Shared by every process when scaled out.
 */
export interface RequestWindow {
  /** Runs `request` once it fits the window for `key`; resolves or rejects as it does. */
  run<T>(key: string, request: () => Promise<T>): Promise<T>;
  /**
   * Runs `request` only if it fits the window for `key` now; otherwise says how soon a place may
   * free, and runs nothing. Rejects as `request` does.
   */
  tryRun<T>(key: string, request: () => Promise<T>): Promise<WindowAttempt<T>>;
}

/** What `RequestWindow.tryRun` came to. */
export type WindowAttempt<T> = { ran: true; value: T } | { ran: false; retryAfterMs: number };

/** What core hands every adapter. */
export interface ChannelDeps {
  intake: InboundIntake;
  /** Present when `channel_connections` is enabled for this platform. */
  binder?: ChatBinder;
  /** The chat commands; other slash words are chat. Platforms with a command menu may list them. */
  commands: readonly CommandInfo[];
  logger: Logger;
  /** Milliseconds since the epoch; injectable for tests. */
  now: () => number;
  /** This platform's webhook deliveries (idempotency across redeliveries, processes and restarts). */
  deliveries: WebhookDeliveries;
  /** This platform's durable key-value state. */
  state: ChannelStateStore;
  /**
   * A request budget of this platform named `name` (Feishu: `chat`, 5 a second): in this process
   * on the embedded default, in Redis for every process when scaled out.
   */
  requestWindow(name: string, perWindow: number, windowMs: number): RequestWindow;
  /**
   * The 429 gate of this platform named `name` (Slack: `workspace`; others: `chat`): a
   * retry-after one process met holds every process's requests back when scaled out. Reads are
   * synchronous (from this process's mirror). Call once per name and share it.
   */
  rateGate(name: string): RateGate;
  /**
   * The budget of this platform named `name` of one request per `intervalMs` per key (Slack:
   * `chat.update`, one every 1200 ms per workspace): in this process on the embedded default, taken
   * by every process's requests when scaled out. Synchronous, like the gate. Call once per name.
   */
  intervalBudget(name: string, intervalMs: number): IntervalBudget;
  /**
   * Conversations, messages and files of a chat the server hosts itself (the web chat), in the
   * database. Only such a channel uses it.
   */
  hostedChats: HostedChats;
  /** Live events of this platform named `name`, to every process; see {@link Topic}. Call once per name. */
  topic(name: string): Topic;
  /** The folder of agent definitions (`<name>/config.yaml`, `<name>/SOUL.md`). */
  agentsDir: string;
  /**
   * The id of the server account named by id or name (an agent's `owner`); undefined when there
   * is none. Rejects when the account store cannot be read.
   */
  findUserId(idOrName: string): Promise<string | undefined>;
}

/** How the console tells a person to send their code (reference §8.1 step 3). */
export interface ConnectOffer {
  mode: 'deep_link' | 'binding_code';
  url: string | null;
  instruction: string;
}

/** The platform's `channel_connections.<name>` block, as binding sees it. */
export interface BindingSettings {
  bot_username?: string | undefined;
}

/** A platform's way of binding chat identities, when it differs from `/connect <code>`. */
export interface ChannelBinding {
  mode: ConnectOffer['mode'];
  /** Why binding cannot be offered with these settings (Telegram without `bot_username`); undefined when it can. */
  missing?(settings: BindingSettings): string | undefined;
  /** The console's offer for a fresh code; only called when `missing` found nothing. */
  offer(code: string, settings: BindingSettings): ConnectOffer;
}

/** A platform: its config schema and a factory. Registered in `channels/index.ts`. */
export interface ChannelDefinition<Config = unknown> {
  name: string;
  /** As users read it, e.g. `Telegram`. */
  displayName: string;
  /** How people bind this platform's identities (reference §8.1); absent = `/connect <code>`, nothing required. */
  binding?: ChannelBinding;
  /** Validates `channels.<name>` of config.yaml. */
  configSchema: z.ZodType<Config>;
  /** Whether the parsed config asks for this channel to run. */
  isEnabled(config: Config): boolean;
  /**
   * Whether this channel's runs, as configured, need the agent in this process: they hand its
   * shell credentials only this server holds (`runHooks.sandboxEnvironment`), which a remote
   * agent server (`runtime.url`) never receives. Absent: never.
   */
  needsEmbeddedRuntime?(config: Config): boolean;
  /** Builds the adapter; it imports the platform's SDK, so only enabled channels load one. */
  create(config: Config, deps: ChannelDeps): Promise<ChannelAdapter>;
}
