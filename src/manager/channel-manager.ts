import { createdFilesText } from '../agent/sandbox/artifacts.js';
import type { SandboxPaths } from '../agent/sandbox/paths.js';
import type { SlashSkillResolution } from '../agent/skills/slash.js';
import { HELPERS_EVENT, type HelpersEvent } from '../agent/subagents/progress.js';
import type { Delivery } from '../bus/types.js';
import type { DurableReply, Outbox } from '../channel/outbox.js';
import { type DedupeKey, dedupeKeyOf, type TurnJournal, type UnfinishedTurn } from '../channel/turn-journal.js';
import type {
  ChannelCapabilities,
  ChannelEgress,
  ChannelFiles,
  ChannelRunHooks,
  ChatIdentity,
  CommandInfo,
  InboundIntake,
  InboundMessage,
  Reply,
  ReplyTarget,
} from '../channel/types.js';
import { AppError, describeError, isDatabaseUnavailable, ThreadBusyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MessageMetrics } from '../metrics.js';
import { type AgentRuntime, LEAD_AGENT_ID, type RunInfo, type RunRequest } from '../runtime/types.js';
import type { ScheduleBook } from '../schedules/book.js';
import { SCHEDULE_ORIGIN_CONTEXT_KEY, scheduleOriginOf } from '../schedules/types.js';
import { sleep } from '../time.js';
import { type AgentChoices, builtinCommands, type Command, parseCommand } from './commands/index.js';
import { ConversationFiles } from './files.js';
import { type FollowUpStore, FollowUps } from './follow-ups.js';
import { MESSAGES } from './messages.js';
import { endsInClarification, extractFinalText } from './response.js';
import { type IdentifiedMessage, isTrustedSender } from './shell-trust.js';
import { StreamText, UpdateThrottle } from './stream-text.js';
import { ThreadTurns } from './thread-turns.js';
import type { ThreadResolver } from './threads.js';
import { safeUserId } from './user-id.js';

/** What the manager needs of a running channel: how to answer and how the platform behaves. */
export interface ChannelHandle {
  egress: ChannelEgress;
  capabilities: ChannelCapabilities;
  /** How users name the platform, for texts like `[Telegram attachment unavailable: …]`. */
  displayName?: string;
  files?: ChannelFiles;
  runHooks?: ChannelRunHooks;
}

export interface ChannelManagerDeps {
  runtime: AgentRuntime;
  threads: ThreadResolver;
  /** Where ingress journaled each accepted message; the manager ends its turn there, or takes it up again after a crash. */
  turns: TurnJournal;
  /** Looks a channel up by name; undefined when it is not running in this process. */
  channel: (name: string) => ChannelHandle | undefined;
  logger: Logger;
  now?: () => number;
  commands?: readonly Command[];
  /** The sandbox folders of a user's thread: uploads land there, presented files come from there. */
  sandboxPaths?: (userId: string, threadId: string) => SandboxPaths;
  /** Resolves `/<skill> task` messages; absent = no skills, such messages are plain chat. */
  resolveSkill?: (text: string) => Promise<SlashSkillResolution>;
  /** Bound identities (reference §4.4); absent = nobody is bound, every sender runs as themselves. */
  identities?: IdentityGate;
  /** Where follow-ups of busy threads wait (channels with `buffersFollowUps`); absent = they are turned away. */
  followUps?: FollowUpStore;
  /** Counts messages and replies (`GET /metrics`); absent = nothing is counted. */
  metrics?: MessageMetrics;
  /** Keeps finals, notices and files the platform would not take, and sends them again; absent = a failed delivery is only logged. */
  outbox?: Outbox;
  /** How long a message that met a database outage waits for the database before it is told of an error; default 15 minutes. */
  databaseWaitMs?: number;
  /** The custom agents people may choose (`/agent`) and create (`/bootstrap`); absent = only the default agent. */
  agents?: AgentChoices;
  /** Default agent per chat (`telegram/12345`) or channel (`telegram`), from `channels.default_agents`. */
  defaultAgents?: Readonly<Record<string, string>>;
  /** The schedules people keep (`/schedule`); absent = schedules are off. */
  schedules?: ScheduleBook;
}

/** Who a chat identity is on this server. */
export interface IdentityGate {
  /** Unbound senders are turned away with the reference text. */
  readonly requiresBoundIdentity: boolean;
  /** The sender's binding; `ownerCanUseShell` is the owner's shell grant (absent = not granted). */
  findBinding(provider: string, identity: ChatIdentity): Promise<IdentityBinding | undefined>;
}

/** A chat identity's binding as the identity gate reports it. */
export interface IdentityBinding {
  id: string;
  ownerUserId: string;
  ownerCanUseShell?: boolean;
  /** The operator disabled the owner: the sender is told so and nothing runs (absent = active). */
  isOwnerDisabled?: boolean;
}

/** How one chat turn ended, for deciding whether a redelivery may retry. */
interface TurnOutcome {
  failed: boolean;
  /** The sender was told why nothing ran (unbound, identity unavailable). */
  told?: boolean;
  /** A fire-and-forget run that goes on after the turn: the turn is finished once it ends. */
  backgroundRun?: { threadId: string; runId: string };
  /**
   * The turn is another process's: one that took the message over while this one stalled past
   * the handover (it answers), or the stalled one that answered it before this one took it over.
   * Nothing more is said here, and the journal is left to the other.
   */
  leftToAnother?: boolean;
}

/** What a run produced: the answer text ('' when none), its final state, and whether it failed. */
interface RunResult {
  failed: boolean;
  text: string;
  values?: unknown;
  /** The run was taken over by the process that took the message over: nothing is to be delivered. */
  takenOver?: boolean;
}

/**
 * Turns an inbound message into an answer, knowing no platform: dedupe, commands, the thread
 * map, and the run mode the channel's capabilities ask for (reference §4).
 */
export class ChannelManager {
  readonly commands: readonly Command[];
  private readonly now: () => number;
  private readonly files: ConversationFiles;
  private readonly followUps: FollowUps | undefined;
  private readonly threadTurns = new ThreadTurns();
  private isStopped = false;

  constructor(private readonly deps: ChannelManagerDeps) {
    this.commands = deps.commands ?? builtinCommands;
    this.now = deps.now ?? Date.now;
    this.files = new ConversationFiles(deps.sandboxPaths, deps.logger);
    this.followUps =
      deps.followUps &&
      new FollowUps({
        store: deps.followUps,
        runtime: deps.runtime,
        startBatch: (threadId, messages, text) => this.startFollowUps(threadId, messages, text),
        logger: deps.logger.child({ component: 'follow-ups' }),
      });
  }

  /** Starts background work: delivering follow-ups a stopped process left waiting. */
  start(): void {
    this.followUps?.start();
  }

  /** Stops background work; waiting follow-ups stay in the database, and turns of runs the shutdown interrupts stay open. */
  stop(): void {
    this.isStopped = true;
    this.followUps?.close();
  }

  /** The commands ingress should classify as commands, with their descriptions. */
  commandInfo(): CommandInfo[] {
    return this.commands.map(({ name, description }) => ({ name, description }));
  }

  /**
   * The bus worker's handler: never throws. The message is in the turn journal already (ingress
   * committed it through `JournaledIntake`); its turn is finished there once answered or told,
   * or released when it failed, so a redelivery may try again.
   */
  async handle(message: InboundMessage, signal: AbortSignal, delivery: Delivery = FIRST_DELIVERY): Promise<void> {
    const log = this.deps.logger.child({ channel: message.channel, chatId: message.chatId, messageId: message.messageId });
    const channel = this.deps.channel(message.channel);
    if (!channel) {
      log.error('message for a channel that is not running here; dropped');
      return;
    }
    const key = dedupeKeyOf(message);
    this.deps.metrics?.accepted(message.channel);
    if (delivery.redelivered) log.warn('message taken over from a worker that died');
    if (message.resumes !== undefined) log.warn({ resumes: message.resumes }, 'turn taken up again after the server restarted');
    log.info({ kind: message.kind, chars: message.text.length }, 'inbound accepted');
    let reply: DurableReply | undefined;
    /** Released (a redelivery may try again), or in the hands of another worker. */
    let isTurnSettled = false;
    let backgroundRun: TurnOutcome['backgroundRun'];
    // Set when the bus says, as a final is about to go out, that another process has the message now.
    let isLost = false;
    try {
      const answer = this.fenced(this.replyTo(message, channel), message, delivery, () => {
        isLost = true;
      });
      reply = answer;
      const outcome = await this.untilDatabaseAnswers(async () => {
        // Only the gate says who a chat sender is; event platforms (GitHub) name the agent's owner themselves.
        const identified =
          channel.capabilities.requiresBoundIdentity === false ? message : await this.identify(withoutIdentity(message), channel, log);
        if (typeof identified === 'string') {
          await answer.finish(identified, FAILED);
          return { failed: false, told: true };
        }
        if (delivery.redelivered && (await this.wasAnsweredByFirstWorker(identified, key, signal, log))) return LEFT_TO_ANOTHER;
        return identified.kind === 'command'
          ? this.handleCommand(identified, answer, channel, signal)
          : this.handleSlashSkillOrChat(identified, answer, channel, signal);
      }, signal, log);
      if (outcome.leftToAnother || isLost) {
        isTurnSettled = true;
        return;
      }
      if (outcome.told) {
        this.answered(message, 'failed');
        return;
      }
      backgroundRun = outcome.backgroundRun;
      if (outcome.failed && key) {
        await this.release(key, log);
        isTurnSettled = true;
      }
      this.answered(message, outcome.failed ? 'failed' : 'ok');
    } catch (error) {
      log.error({ err: describeError(error) }, 'handling failed');
      isTurnSettled = true;
      // A message another process took over is that process's to answer, release or finish.
      if (!isLost) {
        if (key) await this.release(key, log);
        await reply
          ?.finish(writtenMessageOf(error), FAILED)
          .catch((e: unknown) => log.warn({ err: describeError(e) }, 'could not deliver the error reply'));
        this.answered(message, 'failed');
      }
    } finally {
      if (key && !isTurnSettled) {
        if (backgroundRun) this.finishTurnWhenRunEnds(key, backgroundRun, log);
        else await this.finishTurn(key, log);
      }
    }
  }

  /**
   * A fire-and-forget turn (GitHub) stays unfinished in the journal while its run goes on, so a
   * crash mid-run takes it up again at the next start (issue #15). A run this process's shutdown
   * interrupted stays unfinished too; any other end finishes the turn. Never rejects.
   */
  private finishTurnWhenRunEnds(key: DedupeKey, { threadId, runId }: { threadId: string; runId: string }, log: Logger): void {
    void this.deps.runtime
      .joinRun(threadId, runId)
      .then(async (run) => {
        if (run.status === 'interrupted' && this.isStopped) {
          log.info({ runId }, 'background run interrupted by the shutdown; it is taken up again at the next start');
          return;
        }
        await this.finishTurn(key, log);
      })
      .catch((error: unknown) => log.warn({ runId, err: describeError(error) }, 'could not follow a background run to its end; its turn stays open'));
  }

  /**
   * Takes up the turns a process that died left unfinished (issue #15). Only for the sole process
   * of a deployment, at start, before its channels take new messages: every unfinished turn is then
   * an orphan. Each runs once more through `intake`, into its own reply (the placeholder the
   * person saw freeze). A turn taken up once already (it may be what brought the server down), one
   * accepted more than {@link RESUME_WINDOW_MS} ago, or one the intake cannot take is told that
   * the server restarted instead. Never throws.
   */
  async resumeUnfinishedTurns(intake: InboundIntake): Promise<void> {
    const log = this.deps.logger;
    let turns: UnfinishedTurn[];
    try {
      turns = await this.deps.turns.resumeUnfinished();
    } catch (error) {
      log.error({ err: describeError(error) }, 'unfinished turns could not be read; they are not taken up');
      return;
    }
    let resumed = 0;
    for (const turn of turns) {
      const message: InboundMessage = { ...turn.message, resumes: turn.resumes };
      const channel = this.deps.channel(message.channel);
      if (!channel) {
        log.warn({ channel: message.channel }, 'unfinished turn of a channel that is not configured; left as it is');
        continue;
      }
      const isTooLate = turn.resumes > MAX_RESUMES || this.now() - turn.acceptedAt > RESUME_WINDOW_MS;
      if (!isTooLate && (await this.requeue(intake, message))) resumed++;
      else await this.tellInterrupted(message, channel);
    }
    if (turns.length > 0) log.warn({ unfinished: turns.length, resumed, told: turns.length - resumed }, 'took up the turns the last process left unfinished');
  }

  /** Hands a resumed turn to the workers; false when the intake refused it. */
  private async requeue(intake: InboundIntake, message: InboundMessage): Promise<boolean> {
    try {
      const reservation = await intake.reserve();
      await reservation.commit(message);
      return true;
    } catch (error) {
      this.deps.logger.warn({ channel: message.channel, err: describeError(error) }, 'unfinished turn not taken up again');
      return false;
    }
  }

  /** Ends a turn that will not run again with a reply that says so. */
  private async tellInterrupted(message: InboundMessage, channel: ChannelHandle): Promise<void> {
    const log = this.deps.logger.child({ channel: message.channel, chatId: message.chatId, messageId: message.messageId });
    await this.replyTo(message, channel)
      .finish(MESSAGES.interruptedByRestart, FAILED)
      .catch((error: unknown) => log.warn({ err: describeError(error) }, 'could not tell that the server restarted'));
    const key = dedupeKeyOf(message);
    if (key) await this.finishTurn(key, log);
  }

  /**
   * The reply to `message`: its final and files go through the outbox, so a platform that will
   * not take them now gets them later (or they become a visible dead letter).
   */
  private replyTo(message: InboundMessage, channel: ChannelHandle): DurableReply {
    const target = replyTargetOf(message);
    const reply = channel.egress.reply(target);
    // A schedule whose chat refuses the bot for good would run the agent for nobody at every occurrence.
    const { scheduled } = message;
    const schedules = this.deps.schedules;
    const onRefused = scheduled && schedules ? () => void schedules.pauseUndeliverable(scheduled.scheduleId) : undefined;
    if (this.deps.outbox) return this.deps.outbox.durable(message.channel, target, reply, onRefused);
    return {
      update: (text) => reply.update(text),
      abandon: () => reply.abandon?.(),
      finish: async (text, outcome, files = []) => {
        await reply.finish(text, outcome);
        await this.files.send(channel, target, files);
      },
    };
  }

  /**
   * `reply`, whose finals first ask the bus whether this process still holds the message. A
   * process whose event loop stalled past the handover may find that another took the message
   * over meanwhile and answers it: the final is then not sent, the reply is abandoned and
   * `onLost` is told. A bus that cannot lose a message (in-process) gives no such check.
   */
  private fenced(reply: DurableReply, message: InboundMessage, delivery: Delivery, onLost: () => void): DurableReply {
    const { isStillHeld } = delivery;
    if (isStillHeld === undefined) return reply;
    return {
      update: (text) => reply.update(text),
      abandon: () => reply.abandon?.(),
      finish: async (text, outcome, files) => {
        if (await isStillHeld()) return reply.finish(text, outcome, files);
        this.standDown(reply, message);
        onLost();
      },
    };
  }

  /** Another process answers `message` now: nothing more of this reply goes out. */
  private standDown(reply: Reply, message: InboundMessage): void {
    reply.abandon?.();
    this.deps.logger.warn({ channel: message.channel, chatId: message.chatId, messageId: message.messageId }, 'turn taken over by another process; it answers');
  }

  /**
   * Runs `attempt` again while it fails because the database cannot be reached (issue #15): the
   * person keeps seeing the placeholder and is answered once the database is back, for up to
   * `databaseWaitMs`. Nothing of the turn ran yet when such an error surfaces (the run starts
   * only once its thread and run rows are written), so running it again doubles nothing.
   */
  private async untilDatabaseAnswers<T>(attempt: () => Promise<T>, signal: AbortSignal, log: Logger): Promise<T> {
    const deadline = this.now() + (this.deps.databaseWaitMs ?? DEFAULT_DATABASE_WAIT_MS);
    for (let waitMs = FIRST_DATABASE_RETRY_MS; ; waitMs = Math.min(waitMs * 2, MAX_DATABASE_RETRY_MS)) {
      try {
        return await attempt();
      } catch (error) {
        if (!isDatabaseUnavailable(error) || signal.aborted || this.now() + waitMs > deadline) throw error;
        log.warn({ err: describeError(error), retryInMs: waitMs }, 'database unreachable; the message waits for it');
        await sleep(waitMs, signal).catch(() => undefined);
      }
    }
  }

  /** Counts the reply (for fire-and-forget runs: the run's start), timed from ingress. */
  private answered(message: InboundMessage, outcome: 'ok' | 'failed'): void {
    this.deps.metrics?.answered(message.channel, outcome, (this.now() - message.receivedAt) / 1000);
  }

  /**
   * A redelivered message's first worker stopped renewing its claim: it died, or its event loop
   * stalled past the handover. Its run holds the thread until it ends or its lease runs out, and
   * would make this attempt "busy": waits for it, polling, up to {@link DEAD_RUN_WAIT_MS}. True
   * when the first worker was alive after all and finished the turn meanwhile: nothing is run or
   * sent again (the person has the answer; the model is not asked twice). Its final follows the
   * end of its run closely, so a turn found open right after a run ended is looked at once more.
   */
  private async wasAnsweredByFirstWorker(message: InboundMessage, key: DedupeKey | undefined, signal: AbortSignal, log: Logger): Promise<boolean> {
    const threadId = message.scheduled?.threadId ?? (await this.deps.threads.find(message));
    let waited = false;
    if (threadId !== undefined) {
      log.info('waiting for the run of a worker that died to release the thread');
      waited = await this.awaitIdleThread(threadId, DEAD_RUN_WAIT_MS, signal);
    }
    if (key === undefined) return false;
    let isAnswered = await this.hasFinished(key, log);
    if (!isAnswered && waited) {
      await sleep(IDLE_THREAD_POLL_MS, signal).catch(() => undefined);
      isAnswered = await this.hasFinished(key, log);
    }
    if (isAnswered) log.info('message taken over was answered by its first worker; not run again');
    return isAnswered;
  }

  /**
   * Whether the journal has the turn finished. A look that fails (other than an outage, which is
   * waited out) says no, so the turn runs again: answering twice beats never answering.
   */
  private async hasFinished(key: DedupeKey, log: Logger): Promise<boolean> {
    try {
      return await this.deps.turns.hasFinished(key);
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      log.warn({ err: describeError(error) }, 'could not read whether the turn was answered; running it');
      return false;
    }
  }

  /**
   * Resolves once `threadId` has no active run (in any process), after at most `maxWaitMs`, or
   * at once when aborted; true when it waited at all. Polls the runtime's view of the thread.
   */
  private async awaitIdleThread(threadId: string, maxWaitMs: number, signal: AbortSignal, onWait?: () => void): Promise<boolean> {
    const deadline = this.now() + maxWaitMs;
    let waited = false;
    while (!signal.aborted && this.now() < deadline) {
      const thread = await this.deps.runtime.getThread(threadId, { withValues: false }).catch(() => undefined);
      if (thread?.status !== 'busy') return waited;
      if (!waited) onWait?.();
      waited = true;
      await sleep(IDLE_THREAD_POLL_MS, signal).catch(() => undefined);
    }
    return waited;
  }

  /**
   * Reference §4.4: runs the message as the account its sender is bound to; with
   * `require_bound_identity`, an unbound sender gets the text saying how to connect (commands
   * included) and nothing runs; a sender bound to a disabled account is told so, and nothing
   * runs either. Resolves with the message to run, or the reply text instead.
   */
  private async identify(message: InboundMessage, channel: ChannelHandle, log: Logger): Promise<IdentifiedMessage | string> {
    const gate = this.deps.identities;
    if (!gate) return message;
    let binding: IdentityBinding | undefined;
    try {
      binding = await gate.findBinding(message.channel, {
        externalAccountId: message.userId,
        ...(message.workspaceId === undefined ? {} : { workspaceId: message.workspaceId }),
      });
      // Reference §6.0: where the platform allows it, a binding made outside any workspace (in a
      // Discord DM) also holds in every workspace.
      if (!binding && message.workspaceId !== undefined && channel.capabilities.identityFallsBackToNoWorkspace) {
        binding = await gate.findBinding(message.channel, { externalAccountId: message.userId });
      }
    } catch (error) {
      // An outage is waited out by the caller; only a lookup that fails otherwise is refused here.
      if (isDatabaseUnavailable(error)) throw error;
      log.error({ err: describeError(error) }, 'identity lookup failed');
      if (gate.requiresBoundIdentity) return MESSAGES.identityUnavailable;
      return message;
    }
    if (binding?.isOwnerDisabled === true) return MESSAGES.accountDisabled;
    if (binding) {
      return { ...message, ownerUserId: binding.ownerUserId, connectionId: binding.id, isOwnerShellGranted: binding.ownerCanUseShell === true };
    }
    return gate.requiresBoundIdentity ? MESSAGES.unboundIdentity : message;
  }

  private async handleCommand(message: InboundMessage, reply: DurableReply, channel: ChannelHandle, signal: AbortSignal): Promise<TurnOutcome> {
    const parsed = parseCommand(message.text);
    const command = parsed.isWellFormed ? this.commands.find((c) => c.name === parsed.name) : undefined;
    if (!command) {
      const available = this.commands.map((c) => c.name).sort();
      await reply.finish(MESSAGES.unknownCommand(parsed.name, available));
      return { failed: false };
    }
    const defaultAgent = this.defaultAgentOf(message);
    const result = await command.run({
      message,
      args: parsed.args,
      userId: storageUserId(message),
      threads: this.deps.threads,
      runtime: this.deps.runtime,
      commands: this.commands,
      currentAgent: (await this.deps.threads.conversation(message))?.agentName ?? defaultAgent,
      defaultAgent,
      agents: this.deps.agents,
      isTrustedSender: isTrustedSender(message, this.deps.identities !== undefined),
      schedules: this.deps.schedules,
    });
    if ('reply' in result) {
      await reply.finish(result.reply);
      return { failed: false };
    }
    return this.handleChat(message, result.runAsChat.text, reply, channel, signal, result.runAsChat.context);
  }

  /**
   * Reference §5.2, last row: `/<name> task` runs with that skill when it is installed and
   * enabled; a disabled or unknown name is answered without running the agent.
   */
  private async handleSlashSkillOrChat(message: InboundMessage, reply: DurableReply, channel: ChannelHandle, signal: AbortSignal): Promise<TurnOutcome> {
    const resolveSkill = this.deps.resolveSkill;
    if (resolveSkill) {
      let resolution: SlashSkillResolution;
      try {
        resolution = await resolveSkill(message.text);
      } catch (error) {
        this.deps.logger.warn({ err: describeError(error) }, 'slash skill could not be resolved');
        await reply.finish(MESSAGES.skillResolveFailed, FAILED);
        return { failed: false };
      }
      if (resolution.kind === 'unknown') {
        await reply.finish(MESSAGES.unknownCommand(resolution.name, this.commands.map((c) => c.name).sort()));
        return { failed: false };
      }
      if (resolution.kind === 'disabled') {
        await reply.finish(MESSAGES.skillDisabled(resolution.name));
        return { failed: false };
      }
    }
    return this.handleChat(message, message.text, reply, channel, signal);
  }

  private async handleChat(
    message: InboundMessage,
    text: string,
    reply: DurableReply,
    channel: ChannelHandle,
    signal: AbortSignal,
    extraContext: Record<string, unknown> = {},
  ): Promise<TurnOutcome> {
    const files = message.files ?? [];
    if (text.trim() === '' && files.length === 0) {
      await reply.finish(MESSAGES.emptyMessage);
      return { failed: false };
    }
    // A schedule's occurrence runs on the schedule's thread with the agent it was made with.
    const conversation = message.scheduled
      ? { threadId: message.scheduled.threadId, agentName: undefined, isBootstrapping: false }
      : await this.deps.threads.resolveConversation(message);
    const threadId = conversation.threadId;
    // A GitHub binding names its agent; a chat runs the agent chosen for it, else its default.
    const agentName = message.agentName ?? conversation.agentName ?? this.defaultAgentOf(message);
    const context = {
      ...(agentName === undefined ? {} : { agent_name: agentName }),
      ...(conversation.isBootstrapping ? { is_bootstrap: true } : {}),
      // Nobody is there to answer a question when a schedule fires.
      ...(message.scheduled ? { disable_clarification: true } : {}),
      // Where schedules the agent makes in this turn answer (`schedule_task`): this chat.
      ...(this.deps.schedules && !message.scheduled && channel.capabilities.interactive !== false
        ? { [SCHEDULE_ORIGIN_CONTEXT_KEY]: scheduleOriginOf(message, agentName) }
        : {}),
      ...extraContext,
    };
    const turn = () => this.chatOnThread(message, text, threadId, reply, channel, signal, context);
    const { capabilities } = channel;
    if (!capabilities.serializesThreadRuns || capabilities.runMode === 'fire_and_forget') return turn();
    return this.threadTurns.run(`${message.channel}\n${threadId}`, reply, async () => {
      // Scaled out, the thread may be answering in another process: wait for it there too.
      const waited = await this.awaitIdleThread(threadId, QUEUED_TURN_WAIT_MS, signal, () => reply.update(MESSAGES.queuedBehind));
      if (waited) reply.update(MESSAGES.queuedStarted);
      return turn();
    });
  }

  /** One chat turn on its thread: files in, the run in the channel's mode, the final and files out. */
  private async chatOnThread(
    message: InboundMessage,
    text: string,
    threadId: string,
    reply: DurableReply,
    channel: ChannelHandle,
    signal: AbortSignal,
    extraContext: Record<string, unknown>,
  ): Promise<TurnOutcome> {
    const userId = storageUserId(message);
    const received = await this.files.receive({ message, channel, userId, threadId, signal });
    const request = this.runRequest(message, channel, threadId, [text, ...received.notes].filter((line) => line !== '').join('\n'), extraContext);
    if (received.uploads.length > 0) {
      const input = request.input?.messages[0];
      if (input) input.additional_kwargs = { files: received.uploads, ...(received.notes.length > 0 ? { original_user_content: text } : {}) };
    }
    let result: RunResult;
    try {
      switch (channel.capabilities.runMode) {
        case 'stream':
          result = await this.streamTurn(threadId, request, reply, signal, channel.capabilities.minPartialIntervalMs);
          break;
        case 'wait':
          result = await this.waitTurn(threadId, request, signal);
          break;
        case 'fire_and_forget':
          return await this.fireAndForget(message, threadId, request, reply, channel);
      }
    } catch (error) {
      if (isRefusal(error)) {
        await reply.finish(error.code === 'THREAD_BUSY' ? MESSAGES.threadBusy : (error.userMessage ?? MESSAGES.internalError), FAILED);
        return { failed: true };
      }
      throw error;
    }
    if (result.takenOver) {
      this.standDown(reply, message);
      return LEFT_TO_ANOTHER;
    }
    const outputs = result.failed ? { files: [], names: [] } : await this.files.presented(result.values, userId, threadId);
    const filesLine = createdFilesText(outputs.names);
    await reply.finish(
      [result.text, filesLine].filter((part) => part !== '').join('\n\n') || MESSAGES.emptyReply,
      { failed: result.failed, awaitsAnswer: !result.failed && endsInClarification(result.values) },
      outputs.files,
    );
    return { failed: result.failed };
  }

  /**
   * Reference §4.7 C: the run goes on in the background and answers by itself (GitHub agents
   * comment with `gh`). A busy thread buffers the message where the channel asks for it.
   */
  private async fireAndForget(
    message: InboundMessage,
    threadId: string,
    request: RunRequest,
    reply: Reply,
    channel: ChannelHandle,
  ): Promise<TurnOutcome> {
    try {
      const run = await this.createRun(threadId, request, [message], channel);
      return { failed: false, backgroundRun: { threadId, runId: run.run_id } };
    } catch (error) {
      if (!(error instanceof ThreadBusyError && channel.capabilities.buffersFollowUps && this.followUps)) throw error;
      await this.followUps.buffer(threadId, message, error.activeRunId);
      // The platform decides what "busy" looks like; GitHub only logs it.
      await reply.finish(MESSAGES.threadBusy, FAILED);
      return { failed: false };
    }
  }

  /** `channels.default_agents` for the message's chat, else for its channel. */
  private defaultAgentOf(message: InboundMessage): string | undefined {
    const defaults = this.deps.defaultAgents;
    return defaults?.[`${message.channel}/${message.chatId}`] ?? defaults?.[message.channel];
  }

  /** A batch of follow-ups as one run, built as its newest message would run. */
  private async startFollowUps(threadId: string, messages: InboundMessage[], text: string): Promise<RunInfo> {
    const carrier = messages.at(-1) as InboundMessage;
    const channel = this.deps.channel(carrier.channel);
    if (!channel) throw new AppError('CHANNEL_UNAVAILABLE', `channel ${carrier.channel} is not running in this process`, { status: 503 });
    return this.createRun(threadId, this.runRequest(carrier, channel, threadId, text, {}), messages, channel);
  }

  /** `createRun` with the channel's sandbox environment, telling the channel once the run is admitted. */
  private async createRun(threadId: string, request: RunRequest, messages: InboundMessage[], channel: ChannelHandle): Promise<RunInfo> {
    const hooks = channel.runHooks;
    const environment = (await hooks?.sandboxEnvironment?.(messages.at(-1) as InboundMessage)) ?? {};
    const run = await this.deps.runtime.createRun(threadId, request, {
      sandboxSecrets: environment.secrets ?? {},
      sandboxVariables: environment.variables ?? {},
    });
    hooks?.runStarted?.(messages);
    return run;
  }

  /** Reference §4.7 A: partials as the model writes; the caller sends the one final. */
  private async streamTurn(threadId: string, request: RunRequest, reply: Reply, signal: AbortSignal, minPartialIntervalMs?: number): Promise<RunResult> {
    const { events } = await this.deps.runtime.streamRun(
      threadId,
      { ...request, stream_mode: ['messages-tuple', 'values', 'custom'] },
      { signal },
    );
    const streamed = new StreamText();
    const throttle = new UpdateThrottle(this.now, minPartialIntervalMs);
    let helpersStatus = '';
    const partial = () => [streamed.text, helpersStatus].filter((text) => text !== '').join('\n\n') + MESSAGES.streamingCursor;
    let lastValues: unknown;
    let failed = false;
    let runError: RunErrorPart | undefined;
    try {
      for await (const part of events) {
        if (part.event === 'messages' || part.event === 'messages-tuple') {
          if (streamed.accept(part.data) && streamed.text !== '' && throttle.shouldPublish(streamed.text)) {
            reply.update(partial());
          }
        } else if (part.event === 'custom') {
          const helpers = helpersOf(part.data);
          // Rare (twice per helper) and worth seeing at once: not throttled like the tokens.
          if (helpers !== undefined) {
            helpersStatus = MESSAGES.helpersStatus(helpers);
            reply.update(partial());
          }
        } else if (part.event === 'values') {
          lastValues = part.data;
        } else if (part.event === 'error') {
          failed = true;
          runError = part.data as RunErrorPart;
        }
      }
    } catch (error) {
      failed = true;
      this.deps.logger.warn({ threadId, err: describeError(error) }, 'run stream broke');
    }
    if (!failed) return { failed, text: extractFinalText(lastValues) || streamed.text, values: lastValues };
    if (runError?.error === 'RUN_TAKEN_OVER') return { failed, text: '', takenOver: true };
    const text = signal.aborted
      ? streamed.text
        ? MESSAGES.cutShort(streamed.text)
        : MESSAGES.shuttingDown
      : runError?.message && NAMED_RUN_FAILURES.has(runError.error ?? '')
        ? withNotice(streamed.text, runError.message)
        : // Never a partial answer passed off as the whole one (issue #15).
          streamed.text
          ? MESSAGES.cutOff(streamed.text)
          : MESSAGES.streamError;
    return { failed, text };
  }

  private async waitTurn(threadId: string, request: RunRequest, signal: AbortSignal): Promise<RunResult> {
    try {
      const { values } = await this.deps.runtime.waitRun(threadId, request, { signal });
      return { failed: false, text: extractFinalText(values), values };
    } catch (error) {
      if (isRefusal(error)) throw error;
      if (error instanceof AppError && error.code === 'RUN_TAKEN_OVER') return { failed: true, text: '', takenOver: true };
      this.deps.logger.warn({ threadId, err: describeError(error) }, 'run failed');
      const notice = error instanceof AppError && NAMED_RUN_FAILURES.has(error.code) ? error.userMessage : undefined;
      return { failed: true, text: signal.aborted ? MESSAGES.shuttingDown : (notice ?? MESSAGES.streamError) };
    }
  }

  /** Reference §4.5–4.6: the run as the channel's policy and the message shape it. */
  private runRequest(
    message: InboundMessage,
    channel: ChannelHandle,
    threadId: string,
    text: string,
    extraContext: Record<string, unknown>,
  ): RunRequest {
    const { capabilities } = channel;
    // A run taken up again on a platform where the agent acts by itself (GitHub: comments with
    // `gh`) is told so: its earlier steps are in the thread, and must not be done twice.
    const content = message.resumes !== undefined && capabilities.interactive === false ? `${text}\n\n${RESUMED_RUN_NOTE}` : text;
    return {
      assistant_id: LEAD_AGENT_ID,
      input: { messages: [{ role: 'human', content }] },
      multitask_strategy: 'reject',
      config: { recursion_limit: message.recursionLimit ?? Math.max(DEFAULT_RECURSION_LIMIT, capabilities.defaultRecursionLimit ?? 0) },
      context: {
        thread_id: threadId,
        channel_name: message.channel,
        user_id: storageUserId(message),
        channel_user_id: message.userId,
        trusted_sender: isTrustedSender(message, this.deps.identities !== undefined),
        ...(message.agentName === undefined ? {} : { agent_name: message.agentName }),
        // Nobody would answer a question on a non-interactive platform.
        ...(capabilities.interactive === false ? { disable_clarification: true } : {}),
        ...extraContext,
      },
    };
  }

  private async finishTurn(key: DedupeKey, log: Logger): Promise<void> {
    await this.deps.turns.finish(key).catch((error: unknown) => log.warn({ err: describeError(error) }, 'could not record the turn as finished'));
  }

  private async release(key: DedupeKey, log: Logger): Promise<void> {
    await this.deps.turns.release(key).catch((error: unknown) => log.warn({ err: describeError(error) }, 'could not release dedupe key'));
  }
}

/** The outcome of replies that say something went wrong (an error, a refusal, a busy thread). */
const FAILED = { failed: true } as const;
const FIRST_DELIVERY: Delivery = { redelivered: false };
const LEFT_TO_ANOTHER: TurnOutcome = { failed: false, leftToAnother: true };
const DEFAULT_DATABASE_WAIT_MS = 15 * 60_000;
const FIRST_DATABASE_RETRY_MS = 500;
const MAX_DATABASE_RETRY_MS = 5000;
/** A turn is run again once after a crash; a second crash on it is told, not run (the turn may be the cause). */
const MAX_RESUMES = 1;
/** What a resumed non-interactive run reads after its request. */
export const RESUMED_RUN_NOTE =
  '(The server restarted while you were working on this request; it is taken up again. What you already did for it is above: check it, finish what is left, and do not repeat what took effect, such as a comment you already posted.)';
/** An interrupted turn older than this is told, not run: the person has likely moved on. */
const RESUME_WINDOW_MS = 15 * 60_000;
/** Longer than a run's lease (30 s): by then a dead process's run no longer holds its thread. */
const DEAD_RUN_WAIT_MS = 40_000;
/** How long a queued turn waits for another process's run on its thread before trying anyway (then it may be told "busy"). */
const QUEUED_TURN_WAIT_MS = 10 * 60_000;
const IDLE_THREAD_POLL_MS = 1000;

/**
 * Run failures whose own sentence the person reads (what to do about the step limit; which trouble
 * the model's endpoint has); every other failure gets the reference's generic reply.
 */
const NAMED_RUN_FAILURES: ReadonlySet<string> = new Set(['RECURSION_LIMIT', 'MODEL_UNAVAILABLE']);

/** Reference §4.5: a run's recursion limit unless its channel or message sets another. */
const DEFAULT_RECURSION_LIMIT = 100;

/**
 * Whose sandbox and memory a message uses (reference §4.5): the account a bound sender owns,
 * else the sender's platform id made safe.
 */
function storageUserId(message: InboundMessage): string {
  return message.ownerUserId ?? safeUserId(message.userId);
}

/** The message without any identity ingress may have claimed. */
function withoutIdentity(message: IdentifiedMessage): InboundMessage {
  const { ownerUserId: _owner, connectionId: _connection, isOwnerShellGranted: _granted, ...rest } = message;
  return rest;
}

/** The data of a run stream's `error` event. */
interface RunErrorPart {
  error?: string;
  message?: string;
}

/** Partial text the user already saw, then why it stopped. */
const HELPER_STATES = new Set(['waiting', 'working', 'done', 'failed']);

/** The helpers of a `custom` stream event the `task` tool wrote; undefined for any other event. */
function helpersOf(data: unknown): HelpersEvent['helpers'] | undefined {
  const event = data as Partial<HelpersEvent> | null;
  if (event?.type !== HELPERS_EVENT || !Array.isArray(event.helpers)) return undefined;
  const helpers = event.helpers.filter((helper) => typeof helper?.description === 'string' && HELPER_STATES.has(helper.state));
  return helpers.length > 0 ? helpers : undefined;
}

function withNotice(partial: string, notice: string): string {
  return partial === '' ? notice : `${partial}\n\n${notice}`;
}

/** The sentence written for users that `error` carries (an agent server that is gone), else the generic one. */
function writtenMessageOf(error: unknown): string {
  return (error instanceof AppError ? error.userMessage : undefined) ?? MESSAGES.internalError;
}

/** Refused before the run started: the thread is busy, or no model exists. */
function isRefusal(error: unknown): error is AppError {
  return error instanceof AppError && (error.code === 'THREAD_BUSY' || error.code === 'MODEL_NOT_CONFIGURED');
}

function replyTargetOf(message: InboundMessage): ReplyTarget {
  return {
    chatId: message.chatId,
    ...(message.topicId === undefined ? {} : { topicId: message.topicId }),
    isPrivateChat: message.isPrivateChat,
    replyTo: message.replyTo,
    recipient: { userId: message.userId, ...(message.workspaceId === undefined ? {} : { workspaceId: message.workspaceId }) },
    ...(message.platformData === undefined ? {} : { platformData: message.platformData }),
  };
}
