import { DEMO_FACT, DEMO_TOP_OF_MIND, DEMO_VERDICTS, GOAL_REACHED_WORDS } from './messages.js';

/**
 * The demo model's answers to the calls the server makes on its own: the goal evaluator
 * (src/agent/goals/evaluator.ts) and memory extraction (src/agent/memory/extraction.ts). Each is
 * recognised by the first words of its system prompt and answered in the JSON that prompt asks
 * for. test/e2e/demo.test.ts fails when a prompt changes so that it is no longer recognised.
 */

const GOAL_EVALUATOR_PROMPT = 'You judge whether an AI assistant has achieved a goal';
const MEMORY_EXTRACTION_PROMPT = 'You maintain the long-term memory a chat assistant keeps';

/** Statements about oneself that the demo remembers: "I'm a nurse", "my name is Ada", "I like tea". */
const ABOUT_ONESELF = /\b(i am|i'm|my name is|i like|i love|i prefer|i work|i live|i use)\b[^.!?\n]{2,100}/gi;
/** Facts remembered from one conversation at most, besides the demo's own. */
const MAX_NEW_FACTS = 3;

/** Whether a request's system prompt is the goal evaluator's. */
export function isGoalEvaluation(system: string): boolean {
  return system.trimStart().startsWith(GOAL_EVALUATOR_PROMPT);
}

/** Whether a request's system prompt is memory extraction's. */
export function isMemoryExtraction(system: string): boolean {
  return system.trimStart().startsWith(MEMORY_EXTRACTION_PROMPT);
}

/**
 * The verdict on a goal, as `{"verdict","reason","evidence"}`: not met yet after the first
 * answer, so that the goal loop sends the agent back once, and satisfied once the latest answer
 * says the goal is reached.
 */
export function judgeGoal(question: string): string {
  const transcript = question.split('Visible conversation:\n')[1] ?? '';
  const latestAnswer = transcript.split(/\n\n(?=User: |Assistant: )/).findLast((block) => block.startsWith('Assistant: ')) ?? '';
  const isReached = latestAnswer.includes(GOAL_REACHED_WORDS);
  const { reason, evidence } = isReached ? DEMO_VERDICTS.satisfied : DEMO_VERDICTS.notMetYet;
  return JSON.stringify({ verdict: isReached ? 'satisfied' : 'not_met_yet', reason, evidence });
}

/** Reverses the escaping of the extraction prompt (`&amp;`, `&lt;`, `&gt;`). */
function unescapeMarkup(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

function between(text: string, open: string, close: string): string {
  const start = text.indexOf(open);
  const end = text.indexOf(close, start + open.length);
  return start === -1 || end === -1 ? '' : unescapeMarkup(text.slice(start + open.length, end));
}

/**
 * The memory update, as the extraction prompt's JSON: that this person tried the demo, and up to
 * three things they said about themselves, each only once (the stored facts are in the request).
 */
export function extractMemory(question: string): string {
  let stored: { user?: { topOfMind?: string }; facts?: Array<{ content?: string }> } = {};
  try {
    stored = JSON.parse(between(question, '<current_memory>', '</current_memory>')) as typeof stored;
  } catch {
    // Nothing stored that can be read: everything counts as new.
  }
  const known = new Set((stored.facts ?? []).map((fact) => (fact.content ?? '').toLowerCase()));
  const conversation = between(question, '<conversation>', '</conversation>');
  const statements = conversation
    .split(/\n\n(?=User: |Assistant: )/)
    .map((turn) => turn.trim())
    .filter((turn) => turn.startsWith('User: '))
    .flatMap((turn) => [...turn.matchAll(ABOUT_ONESELF)].map((match) => `Said: "${match[0].trim()}".`));
  const candidates = [DEMO_FACT, ...statements.slice(0, MAX_NEW_FACTS)];
  const newFacts = [...new Set(candidates)]
    .filter((content) => !known.has(content.toLowerCase()))
    .map((content) => ({ content, category: content === DEMO_FACT ? 'context' : 'preference', confidence: 0.9 }));
  const topOfMind = stored.user?.topOfMind ? '' : DEMO_TOP_OF_MIND;
  return JSON.stringify({ user: { workContext: '', personalContext: '', topOfMind }, newFacts, factsToRemove: [] });
}
