import { DEMO_MESSAGES, DEMO_INTRODUCTION, DEMO_LABEL } from './messages.js';
import { isGoalEvaluation, isMemoryExtraction, judgeGoal, extractMemory } from './background.js';

/** A chat message as an OpenAI-compatible client sends it. */
export interface WireMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
}

/** What the script needs of one `POST /v1/chat/completions`. */
export interface ScriptRequest {
  messages: readonly WireMessage[];
  /** Names of the tools the request offers (`tools[].function.name`). */
  toolNames: readonly string[];
  now: Date;
}

/** One scripted answer: text, or tool calls for the agent to run. */
export type ScriptReply = { text: string } | { toolCalls: Array<{ name: string; args: Record<string, unknown> }> };

/** The tools of the agent the script uses (src/agent/sandbox/tools.ts). */
const READ_FILE = 'read_file';
const WRITE_FILE = 'write_file';
const PRESENT_FILES = 'present_files';
/** Where files the person should receive go (the agent's system prompt says so). */
const OUTPUTS_DIR = '/mnt/user-data/outputs';
/** Files read from one message at most. */
const MAX_FILES_READ = 3;

/** Words that ask for a file: "write a file", "make me a file", "create the file", "send a file". */
const WANTS_FILE = /\b(write|make|create|send|give|generate)\b(\s+\w+){0,3}\s+(file|note|document)\b/i;
/** The hidden message the goal loop sends the agent back to work with (src/agent/goals/loop.ts). */
const GOAL_CONTINUATION = /<goal_continuation>\s*Active goal: ([^\n]*)/;
/** One line of the `<current_uploads>` block of the system prompt (src/agent/prompt.ts). */
const UPLOAD_LINE = /^- (\/mnt\/user-data\/uploads\/[^\n]+?) \((\d+) bytes(?:, image)?\)$/gm;

/** A message's text, its text parts joined; `''` for none. */
export function messageText(message: WireMessage | undefined): string {
  const content = message?.content;
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? '').join('');
}

/** The system prompt (`system`, or `developer` as newer clients call it). */
export function systemText(messages: readonly WireMessage[]): string {
  return messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map(messageText)
    .join('\n');
}

/**
 * The demo model: what it answers to one request. Background calls (the goal evaluator, memory
 * extraction) get the JSON they ask for; the agent's calls get a labelled answer, after the
 * tool calls that reading a sent file or writing one takes. Pure: the whole conversation is in
 * the request, so the same request always gets the same answer.
 */
export function scriptedReply(request: ScriptRequest): ScriptReply {
  const system = systemText(request.messages);
  const lastUser = request.messages.findLast((m) => m.role === 'user');
  if (isGoalEvaluation(system)) return { text: judgeGoal(messageText(lastUser)) };
  if (isMemoryExtraction(system)) return { text: extractMemory(messageText(lastUser)) };
  return agentReply(request, system);
}

/** One call of a tool in this turn, and what the tool answered (undefined while it has not). */
interface ToolCallMade {
  name: string;
  args: Record<string, unknown>;
  result: string | undefined;
}

function agentReply(request: ScriptRequest, system: string): ScriptReply {
  const lastUserIndex = request.messages.findLastIndex((m) => m.role === 'user');
  const said = messageText(request.messages[lastUserIndex]);
  const calls = toolCallsSince(request.messages, lastUserIndex);
  const offers = (name: string) => request.toolNames.includes(name);
  // The introduction goes with the first answer of a conversation: no answer came before this turn.
  const isFirstAnswer = !request.messages.slice(0, Math.max(lastUserIndex, 0)).some((m) => m.role === 'assistant' && messageText(m).trim() !== '');
  const answer = (text: string): ScriptReply => ({ text: `${DEMO_LABEL}${text}${isFirstAnswer ? `\n\n${DEMO_INTRODUCTION}` : ''}` });

  const continuation = GOAL_CONTINUATION.exec(said);
  if (continuation) return answer(DEMO_MESSAGES.goalContinued(continuation[1] as string));

  const uploads = [...system.matchAll(UPLOAD_LINE)].map((match) => ({ path: match[1] as string, size: Number(match[2]) })).slice(0, MAX_FILES_READ);
  if (uploads.length > 0 && offers(READ_FILE)) {
    const reads = calls.filter((call) => call.name === READ_FILE);
    if (reads.length === 0) {
      return { toolCalls: uploads.map((file) => ({ name: READ_FILE, args: { description: 'read the file you sent', path: file.path } })) };
    }
    const described = uploads.map((file) => {
      const result = reads.find((call) => call.args.path === file.path)?.result;
      return DEMO_MESSAGES.fileRead({ name: baseName(file.path), size: file.size, ...readOutcome(result) });
    });
    return answer([...described, DEMO_MESSAGES.filesReadEnd].join(' '));
  }

  if (WANTS_FILE.test(said) && offers(WRITE_FILE) && offers(PRESENT_FILES)) {
    const name = DEMO_MESSAGES.writtenFileName;
    const path = `${OUTPUTS_DIR}/${name}`;
    const written = calls.find((call) => call.name === WRITE_FILE);
    // One step each: the file must exist before present_files looks at it.
    if (written === undefined) {
      return { toolCalls: [{ name: WRITE_FILE, args: { description: 'write a note for you', path, content: DEMO_MESSAGES.writtenFileContent(said, request.now) } }] };
    }
    if (written.result !== undefined && written.result.trim() !== 'OK') return answer(DEMO_MESSAGES.fileNotSent(firstLine(written.result)));
    const presented = calls.find((call) => call.name === PRESENT_FILES);
    if (presented === undefined) return { toolCalls: [{ name: PRESENT_FILES, args: { filepaths: [path] } }] };
    if (presented.result !== undefined && !presented.result.startsWith('Presented')) return answer(DEMO_MESSAGES.fileNotSent(firstLine(presented.result)));
    return answer(DEMO_MESSAGES.fileSent(name));
  }

  if (lastUserIndex === -1) return { text: `${DEMO_LABEL}${DEMO_MESSAGES.fallback}` };
  return answer(DEMO_MESSAGES.plain(said));
}

/** The tool calls the assistant made after the message at `from`, each with its tool message's text. */
function toolCallsSince(messages: readonly WireMessage[], from: number): ToolCallMade[] {
  const made: ToolCallMade[] = [];
  const byId = new Map<string, ToolCallMade>();
  for (const message of messages.slice(from + 1)) {
    for (const call of message.role === 'assistant' ? (message.tool_calls ?? []) : []) {
      const entry: ToolCallMade = { name: call.function.name, args: parseArguments(call.function.arguments), result: undefined };
      made.push(entry);
      byId.set(call.id, entry);
    }
    if (message.role === 'tool') {
      const entry = byId.get(message.tool_call_id ?? '');
      if (entry) entry.result = messageText(message);
    }
  }
  return made;
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * What read_file answered: the file's first line, or why it could not be read. The tool answers
 * `Error: …` when it fails, and `(empty)` for an empty file (src/agent/sandbox/tools.ts).
 */
function readOutcome(result: string | undefined): { firstLine: string | undefined; error: string | undefined } {
  if (result === undefined) return { firstLine: undefined, error: 'the tool gave no answer' };
  if (result.startsWith('Error: ')) return { firstLine: undefined, error: firstLine(result.slice('Error: '.length)) };
  if (result === '(empty)') return { firstLine: undefined, error: undefined };
  return { firstLine: firstLine(result), error: undefined };
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]?.trim() ?? '';
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
