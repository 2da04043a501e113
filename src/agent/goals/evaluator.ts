import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { z } from 'zod';
import type { GoalVerdict } from '../../db/schema/index.js';
import { withoutThinking } from '../thinking.js';

/** Most characters of conversation the evaluator sees; the most recent turns are kept. */
export const MAX_TRANSCRIPT_CHARS = 12_000;
/** Longest reason or evidence kept from an evaluator answer; they are stored and quoted back. */
const MAX_VERDICT_TEXT_CHARS = 1000;
const OMITTED_MARKER = '[earlier conversation omitted]';

/** What the evaluator concluded about a goal, before the runtime decides what to do with it. */
export interface GoalJudgement {
  verdict: GoalVerdict;
  /** One or two sentences; shown to the agent in a continuation and stored for the user. */
  reason: string;
  /** Short summary of the visible evidence the verdict rests on; may be empty. */
  evidence: string;
}

export interface EvaluateGoalOptions {
  /** The evaluator model: `goals.evaluator_model`, or the run's own model. */
  model: BaseChatModel;
  /** The goal's normalized objective. */
  objective: string;
  /** The thread's messages; only the visible ones reach the model (see {@link visibleTranscript}). */
  messages: BaseMessage[];
  /** Aborts the model call; an aborted evaluation is `evaluation_failed`. */
  signal?: AbortSignal;
}

type Turn = { role: 'User' | 'Assistant'; text: string };

/**
 * Users see human messages not marked `hide_from_ui` and assistant text. Tool output, system
 * prompts, hidden continuations and tool-call-only assistant steps never reach a chat, so the
 * evaluator must not count them as evidence either.
 */
function visibleTurn(message: BaseMessage): Turn | undefined {
  if (message.additional_kwargs?.hide_from_ui === true) return undefined;
  if (message.type !== 'human' && message.type !== 'ai') return undefined;
  const text = message.text.trim();
  if (text === '') return undefined;
  return { role: message.type === 'human' ? 'User' : 'Assistant', text };
}

/**
 * The conversation as a user saw it, one `User: …` / `Assistant: …` block per message, oldest
 * first, at most {@link MAX_TRANSCRIPT_CHARS} long. When it is longer, whole turns are kept from
 * the newest back and a marker replaces the rest; a newest turn too long on its own keeps its end.
 * Returns `''` when nothing is visible.
 */
export function visibleTranscript(messages: BaseMessage[]): string {
  const turns = messages.map(visibleTurn).filter((turn): turn is Turn => turn !== undefined);
  const blocks = turns.map((turn) => `${turn.role}: ${turn.text}`);
  const full = blocks.join('\n\n');
  if (full.length <= MAX_TRANSCRIPT_CHARS) return full;

  const budget = MAX_TRANSCRIPT_CHARS - OMITTED_MARKER.length - 2;
  const kept: string[] = [];
  let used = 0;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i] as string;
    const cost = block.length + (kept.length > 0 ? 2 : 0);
    if (used + cost > budget) break;
    kept.push(block);
    used += cost;
  }
  if (kept.length === 0) {
    const newest = turns.at(-1) as Turn;
    const prefix = `${newest.role}: …`;
    kept.push(prefix + newest.text.slice(-(budget - prefix.length)));
  }
  return [OMITTED_MARKER, ...kept.reverse()].join('\n\n');
}

/**
 * Text of the latest visible assistant message, trimmed; `''` when there is none. The no-progress
 * breaker compares this between continuations.
 */
export function latestVisibleAssistantText(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const turn = visibleTurn(messages[i] as BaseMessage);
    if (turn?.role === 'Assistant') return turn.text;
  }
  return '';
}

const EVALUATOR_INSTRUCTIONS = `You judge whether an AI assistant has achieved a goal the user set for a conversation.
Judge ONLY from the visible conversation you are given. Do not assume that files, commands, tests or anything outside the conversation changed unless the assistant's visible messages show it.

Answer with exactly one JSON object and nothing else:
{"verdict": "...", "reason": "...", "evidence": "..."}

verdict is one of:
- "satisfied": the visible conversation shows the goal is fully achieved.
- "not_met_yet": not achieved yet, and the assistant can make further progress on its own.
- "needs_user_input": the assistant needs an answer, a decision or material from the user to go on.
- "blocked": progress is impossible for now (missing access, an outside system failing or pending, a repeated failure).
If the evidence is too weak to prove the goal is achieved, it is not "satisfied".

reason: one or two short sentences explaining the verdict, addressed to the assistant.
evidence: one short sentence naming the visible messages the verdict rests on.`;

function evaluatorPrompt(objective: string, transcript: string): BaseMessage[] {
  return [
    new SystemMessage(EVALUATOR_INSTRUCTIONS),
    new HumanMessage(
      `Goal:\n${objective}\n\nVisible conversation:\n${transcript}\n\nIs the goal achieved? Answer with the JSON object only.`,
    ),
  ];
}

/**
 * Asks `model` whether the goal is met, from the visible conversation only. Never throws: a model
 * error, a cancellation, an answer that is not the requested JSON, or an unknown verdict all come
 * back as `evaluation_failed` with a short reason that holds no model text, keys or prompts.
 * Without a visible assistant reply there is nothing to judge, so no model call is made.
 */
export async function evaluateGoal(options: EvaluateGoalOptions): Promise<GoalJudgement> {
  if (latestVisibleAssistantText(options.messages) === '') {
    return failed('no visible assistant reply to evaluate');
  }
  const transcript = visibleTranscript(options.messages);
  let answer: string;
  try {
    const response = await options.model.invoke(evaluatorPrompt(options.objective, transcript), {
      runName: 'goal_evaluator',
      ...(options.signal ? { signal: options.signal } : {}),
    });
    answer = response.text;
  } catch (error) {
    return failed(describeModelFailure(error, options.signal));
  }
  return parseJudgement(answer);
}

const answerSchema = z.object({
  // evaluation_failed is ours, not the model's: from the model it is as unknown as any other word.
  verdict: z.enum(['satisfied', 'not_met_yet', 'needs_user_input', 'blocked']),
  reason: z.string(),
  // Evidence is a nicety; a malformed one is dropped rather than failing a usable verdict.
  evidence: z.string().optional().catch(undefined),
});

/** Parses an evaluator answer; exported for tests of the cleanup rules. Never throws. */
export function parseJudgement(answer: string): GoalJudgement {
  const candidate = stripCodeFence(withoutThinking(answer));
  const start = candidate.indexOf('{');
  const end = candidate.lastIndexOf('}');
  if (start === -1 || end <= start) return failed('evaluator answer held no JSON object');
  let payload: unknown;
  try {
    payload = JSON.parse(candidate.slice(start, end + 1));
  } catch {
    return failed('evaluator answer was not valid JSON');
  }
  const parsed = answerSchema.safeParse(payload);
  if (!parsed.success) {
    const verdictIssue = parsed.error.issues.some((issue) => issue.path[0] === 'verdict');
    return failed(verdictIssue ? 'evaluator answer had no known verdict' : 'evaluator answer was missing its reason');
  }
  return {
    verdict: parsed.data.verdict,
    reason: tidy(parsed.data.reason),
    evidence: tidy(parsed.data.evidence ?? ''),
  };
}

/** Models often wrap JSON in a ```json fence despite being told not to. */
function stripCodeFence(text: string): string {
  const fenced = /^```[\w-]*\s*\n([\s\S]*?)\n?```$/.exec(text.trim());
  return fenced ? (fenced[1] as string).trim() : text.trim();
}

function tidy(text: string): string {
  return text.trim().replace(/\s+/g, ' ').slice(0, MAX_VERDICT_TEXT_CHARS);
}

function failed(reason: string): GoalJudgement {
  return { verdict: 'evaluation_failed', reason, evidence: '' };
}

/** Status and error name only: the endpoint's message may echo prompts or keys. */
function describeModelFailure(error: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) return 'evaluation cancelled';
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === 'number') return `evaluator model failed (HTTP ${status})`;
  const name = error instanceof Error ? error.name : 'unknown error';
  return `evaluator model failed (${name})`;
}
