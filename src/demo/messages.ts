/**
 * Everything the demo model says, in one place. Every answer starts with {@link DEMO_LABEL}, so
 * nobody takes a scripted answer for a real model's.
 */

/** The first words of every answer the demo model writes. */
export const DEMO_LABEL = '[demo model] ';

/** Where a newcomer learns to name a real model. */
const REAL_MODEL_HINT =
  'To talk to a real model, name one under `models:` in config.yaml (docs/configuration.md, the `models[]` keys) and start the server with `npm start`; the demo is then not needed.';

/** Added to the first answer of a conversation. */
export const DEMO_INTRODUCTION = [
  'This is the scripted demo model of deerflow-channels, not a real AI: its answers are written in advance, so you can try the chat without any key.',
  'Try these: attach a file and send it, ask me to "write a file", set a goal with /goal <what you want>, and after a few messages see what I remember with /memory.',
  REAL_MODEL_HINT,
].join(' ');

/** Longest part of the person's message quoted back. */
const MAX_QUOTE_CHARS = 80;

function quote(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_QUOTE_CHARS ? `${oneLine.slice(0, MAX_QUOTE_CHARS - 1)}…` : oneLine;
}

/** The demo model's answers to the agent's requests; {@link DEMO_LABEL} is put before each. */
export const DEMO_MESSAGES = {
  /** A plain message: a short answer of several sentences, so streaming shows. */
  plain: (said: string) =>
    [
      said === '' ? 'You sent an empty message.' : `You wrote: "${quote(said)}".`,
      'I am a scripted demo, so I cannot really answer that, but a real model would, and its answer would stream into this chat word by word, just like this one.',
      'Files, goals and memory work here exactly as they do with a real model.',
    ].join(' '),

  /** One file the person sent, as read with the file tool. */
  fileRead: (file: { name: string; size: number; firstLine: string | undefined; error: string | undefined }) => {
    if (file.error !== undefined) return `You sent ${file.name} (${file.size} bytes). I could not read it as text: ${file.error}`;
    if (file.firstLine === undefined) return `You sent ${file.name} (${file.size} bytes). It is empty.`;
    return `You sent ${file.name} (${file.size} bytes). Its first line is: "${quote(file.firstLine)}".`;
  },
  filesReadEnd: 'I read it with my read_file tool in my workspace; a real model would go on to work with what it holds.',

  /** The file the model writes when asked for one. */
  writtenFileName: 'demo-note.md',
  writtenFileContent: (said: string, when: Date) =>
    [
      '# A note from the demo model',
      '',
      `Written on ${when.toISOString().slice(0, 16).replace('T', ' ')} UTC, because you asked: "${quote(said)}".`,
      '',
      'The agent wrote this file with its write_file tool in its private workspace',
      '(/mnt/user-data/outputs) and sent it to you with present_files.',
      '',
      REAL_MODEL_HINT,
      '',
    ].join('\n'),
  fileSent: (name: string) =>
    `Here is ${name}: I wrote it with my write_file tool and sent it to you with present_files. Press it below to download it.`,
  fileNotSent: (reason: string) => `I tried to write you a file, but the tool answered: ${reason}`,

  /** The continuation the goal loop asks for once the evaluator says the goal is not met yet. */
  goalContinued: (objective: string) =>
    `Continuing with the goal "${quote(objective)}": the second and last step is done, so the goal is reached. A real model would keep working with its tools until the evaluator agrees.`,

  /** Anything the script has no answer for (a summary request, a helper agent). */
  fallback: 'I am a scripted demo and have no answer for this request.',
} as const;

/**
 * The words in the demo's own answers that tell the goal evaluator the goal is reached
 * (they appear in {@link DEMO_MESSAGES.goalContinued}).
 */
export const GOAL_REACHED_WORDS = 'so the goal is reached';

/** The goal evaluator's reasons, as the demo gives them. */
export const DEMO_VERDICTS = {
  notMetYet: {
    reason: 'The demo model has answered once; one more turn finishes the goal.',
    evidence: 'The latest assistant message is its first answer to the goal.',
  },
  satisfied: {
    reason: 'The demo model says the goal is reached.',
    evidence: 'The latest assistant message says so.',
  },
} as const;

/** What the demo's memory extraction remembers of everyone who tried it. */
export const DEMO_FACT = 'Tried deerflow-channels with the scripted demo model.';
export const DEMO_TOP_OF_MIND = 'Trying out deerflow-channels in the web chat with the scripted demo model.';
