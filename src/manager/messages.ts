import type { HelperProgress } from '../agent/subagents/progress.js';
import { codeSpan, literalMarkdown as quoted } from '../channel/markdown-syntax.js';

/** How the helpers' status line marks each helper's state. */
const HELPER_MARKS = { waiting: '⏸', working: '⏳', done: '✅', failed: '⚠️' } as const;

/**
 * Every text the manager shows a user, in one place (reference §4.11, §5). They are Markdown, as the
 * agent's answers are; whatever they quote of somebody else (a goal, a fact, a name) goes through
 * `quoted`, so it shows as written.
 */
export const MESSAGES = {
  unboundIdentity: 'Connect this channel from DeerFlow Settings, complete the in-channel connect step, then send your message again.',
  /** A chat bound to an account the operator disabled, and the gateway's 403 to its key (`docs/accounts.md`). */
  accountDisabled: 'This account is disabled. Ask the operator.',
  identityUnavailable:
    'Channel connection verification is temporarily unavailable. Please try again later or contact the DeerFlow operator.',
  threadBusy: 'This conversation is already processing another request. Please wait for it to finish and try again.',
  // The typographic apostrophe is the reference's (§4.7).
  queuedBehind: 'Queued behind another request in this conversation. I’ll start working on this as soon as it finishes.',
  queuedStarted: 'thinking...',
  internalError: 'An internal error occurred. Please try again.',
  streamError: 'An error occurred while processing your request. Please try again.',
  emptyReply: '(No response from agent)',
  emptyMessage: 'Your message was empty. Send some text and I will answer.',
  shuttingDown: 'The server is restarting and stopped this reply. Please send your message again in a moment.',
  interruptedByRestart: 'The server restarted before it could answer this message. Please send it again.',
  cutShort: (partial: string) => `${partial}\n\n(The server restarted before this answer was finished. Please ask again.)`,
  cutOff: (partial: string) => `${partial}\n\n(This answer was cut off: the model stopped before it finished. Please ask again.)`,
  streamingCursor: ' ▉',
  /** The one status line of a run's helpers (`task`), below the partial answer while it streams. */
  helpersStatus: (helpers: readonly HelperProgress[]) =>
    `Helpers: ${helpers.map((helper) => `${HELPER_MARKS[helper.state]} ${quoted(helper.description)}`).join(' · ')}`,
  newConversation: 'New conversation started.',
  noConversation: 'No active conversation.',
  activeThread: (threadId: string) => `Active thread: ${threadId}`,
  noModels: 'No models configured.',
  modelList: (names: string[]) => `Available models:\n${names.map((name) => `• ${quoted(name)}`).join('\n')}`,
  unknownCommand: (name: string | undefined, available: string[]) =>
    `${name === undefined ? 'Unknown command.' : `Unknown command: /${quoted(name)}.`} Available commands: ${available.map((c) => `/${c}`).join(' | ')}`,
  helpHeader: 'Available commands:',
  skillDisabled: (name: string) => `Skill ${codeSpan(`/${name}`)} is installed but disabled. Enable it before using slash activation.`,
  skillResolveFailed: 'Failed to resolve slash skill command. Please check the skill configuration.',
  attachmentUnavailable: (platform: string, name: string, reason: string) => `[${platform} attachment unavailable: ${name} (${reason})]`,
  filesNotSupported: 'files are not supported here',
  filesNotCarried: 'this server does not pass files to the agent server',
  skillHelpLine: '/<skill-name> <task> — Activate an enabled skill for one turn',
  memoryCount: (count: number) => `Memory contains ${count} fact(s).`,
  moreFacts: (count: number) => `… and ${count} more.`,
  memoryCleared: (count: number) => `Memory cleared: ${count} fact(s) forgotten.`,
  memoryFetchFailed: 'Failed to fetch memory information.',
  memoryClearFailed: 'Failed to clear memory.',
  noGoal: 'No active goal.',
  goal: (objective: string) => `Goal: ${quoted(objective)}`,
  goalCleared: 'Goal cleared.',
  goalFetchFailed: 'Failed to fetch goal information.',
  goalClearFailed: 'Failed to clear goal.',
  goalSetFailed: 'Failed to set goal.',
  defaultAgentDescription: 'the default agent',
  agentList: (current: string, agents: readonly { name: string; description: string }[]) =>
    [
      `Current agent: ${quoted(current)}`,
      'Agents you can talk to:',
      ...agents.map((agent) => `• ${quoted(agent.name)}${agent.description === '' ? '' : ` — ${quoted(agent.description)}`}`),
      'Switch with /agent <name>; /agent default goes back to the default.',
    ].join('\n'),
  agentUnavailable: (name: string, available: readonly string[]) => `No agent named '${quoted(name)}' is available to you. Agents you can talk to: ${available.map(quoted).join(', ')}.`,
  agentSwitched: (name: string, description: string) =>
    `Now talking to ${quoted(name)}${description === '' ? '' : ` (${quoted(description)})`}. New conversation started.`,
  bootstrapNotAllowed: 'Only trusted users can set up agents here: the operator, users in allowed_users, or users bound to an account.',
  bootstrapUnavailable: 'Agents cannot be set up from chat on this server: the operator must set agents.dir in config.yaml to a folder the server can write to.',
} as const;
