import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { GraphRecursionError, type LangGraphRunnableConfig } from '@langchain/langgraph';
import type { ChatOpenAI } from '@langchain/openai';
import pLimit, { type LimitFunction } from 'p-limit';
import { z } from 'zod';
import { withInterruptedToolCallsClosed } from '../interrupted-tool-calls.js';
import { buildLeadGraph, type LeadGraph } from '../lead-graph.js';
import { withoutThinking } from '../thinking.js';
import type { SubagentsConfig } from './config.js';
import { HELPERS_EVENT, type HelperProgress, type HelpersEvent } from './progress.js';

export const TASK = 'task';

/** The persona of every helper: it reports to the agent, and nobody answers its questions. */
export const HELPER_SOUL = [
  'You are a helper working for another agent, which gave you one self-contained job: the message below.',
  'Do the job with your tools. Do not ask questions: nobody will answer them; make reasonable assumptions and name them.',
  'When you are done, reply with what the other agent needs: the result, the facts it rests on, the paths of files you wrote under /mnt/user-data, and what you could not do and why.',
  'Your reply is all it sees of your work: complete, but no longer than needed.',
].join('\n');

/** Characters of a helper's report the agent reads at most. */
const MAX_REPORT_CHARS = 20_000;

export interface TaskToolOptions {
  /** The run's model: a helper thinks with the same model as the agent that called it. */
  model: ChatOpenAI;
  /** The helper's tools: the run's own, without `task` (helpers do not hire helpers) and without asking the user. */
  tools: readonly StructuredToolInterface[];
  config: SubagentsConfig;
  /** The helper's system prompt, built when it starts (it holds the time). */
  systemPrompt(): string;
  /**
   * An object that lives exactly as long as the run calling the tool (its turn context):
   * the run's helpers are counted and shown per run. Undefined outside a run.
   */
  runOf(config: RunnableConfig | undefined): object | undefined;
}

/** The helpers of one run: at most `max_concurrent` work at once, and every one is on the status line. */
interface RunHelpers {
  limit: LimitFunction;
  helpers: HelperProgress[];
}

/**
 * `task`: hands a self-contained job to a helper, a sub-agent with a fresh conversation (only the
 * job's text), the run's tools and the run's model, and returns its final report. Calls in one
 * answer run in parallel, `max_concurrent` at a time; each one's progress goes to the run's
 * `custom` stream as a `helpers` event, which chats show as one status line. A helper stops with
 * its run (cancelled or timed out), after `max_steps` or after `timeout_seconds`; its failure
 * comes back to the agent as a sentence.
 */
export function createTaskTool(options: TaskToolOptions): StructuredToolInterface {
  const { config } = options;
  const runs = new WeakMap<object, RunHelpers>();
  let graph: LeadGraph | undefined;
  const helperGraph = (): LeadGraph => {
    graph ??= buildLeadGraph({
      model: options.model,
      tools: [...options.tools],
      request: async (state) => ({ messages: [new SystemMessage(options.systemPrompt()), ...withInterruptedToolCallsClosed(state.messages)] }),
      // A helper's conversation ends with it: nothing to keep, and nothing written into the run's thread.
      checkpointer: false,
    });
    return graph;
  };

  return tool(
    async ({ description, prompt }, runConfig?: RunnableConfig) => {
      const key = options.runOf(runConfig) ?? {};
      let run = runs.get(key);
      if (run === undefined) {
        run = { limit: pLimit(config.max_concurrent), helpers: [] };
        runs.set(key, run);
      }
      const helpers = run.helpers;
      const progress: HelperProgress = { description, state: 'waiting' };
      helpers.push(progress);
      const publish = (state: HelperProgress['state']) => {
        progress.state = state;
        const event: HelpersEvent = { type: HELPERS_EVENT, helpers: helpers.map((helper) => ({ ...helper })) };
        (runConfig as LangGraphRunnableConfig | undefined)?.writer?.(event);
      };
      publish('waiting');
      return run.limit(async () => {
        const parentSignal = runConfig?.signal;
        parentSignal?.throwIfAborted();
        publish('working');
        const timeout = AbortSignal.timeout(config.timeout_seconds * 1000);
        try {
          const result = await helperGraph().invoke(
            { messages: [new HumanMessage(prompt)] },
            {
              configurable: runScopedEntries(runConfig?.configurable),
              signal: parentSignal ? AbortSignal.any([parentSignal, timeout]) : timeout,
              recursionLimit: config.max_steps,
              // Its model calls stream nowhere: only the agent's own answer reaches the chat.
              tags: ['nostream'],
              runName: 'subagent',
            },
          );
          publish('done');
          return reportOf(result.messages.at(-1)?.text ?? '');
        } catch (error) {
          publish('failed');
          if (parentSignal?.aborted) throw error;
          return failureText(description, error, timeout.aborted, config);
        }
      });
    },
    {
      name: TASK,
      description: [
        'Hand a self-contained job to a helper: a sub-agent with its own conversation and your tools (but not this one, and it cannot ask the user anything).',
        'Use it for work of many steps that you can describe completely up front (research across several sources, a long analysis, independent parts of a bigger job), so your own conversation stays short.',
        `Call it several times in one answer to run jobs in parallel; ${config.max_concurrent} helpers work at once.`,
        'The helper sees only `prompt`, not this conversation: give it every fact, file path and constraint it needs. You get its final report back.',
      ].join(' '),
      schema: z.object({
        description: z.string().min(1).max(80).describe('A few words naming the job, shown to the user while the helper works, e.g. "Compare hotel prices".'),
        prompt: z.string().min(1).max(20_000).describe('The whole job: what to do, everything needed to do it, and what to report.'),
      }),
    },
  );
}

/**
 * The run's own `configurable` entries (thread, user, sandbox environment) a helper's tools need;
 * LangGraph's internal ones (`__pregel_*`, `checkpoint_*`) stay with the run's graph.
 */
function runScopedEntries(configurable: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(configurable ?? {}).filter(([key]) => !key.startsWith('__') && !key.startsWith('checkpoint_')));
}

function reportOf(text: string): string {
  const report = withoutThinking(text).trim();
  if (report === '') return 'The helper finished without a report.';
  return report.length <= MAX_REPORT_CHARS ? report : `${report.slice(0, MAX_REPORT_CHARS)}\n[... the report goes on; cut at ${MAX_REPORT_CHARS} characters ...]`;
}

/** Why a helper did not finish, in a sentence the agent can act on (never the provider's text). */
function failureText(description: string, error: unknown, isTimedOut: boolean, config: SubagentsConfig): string {
  const job = JSON.stringify(description);
  if (isTimedOut) return `Error: the helper ran out of time (${config.timeout_seconds} s) on ${job}; its work is lost. Split the job, or do it yourself.`;
  if (error instanceof GraphRecursionError) {
    return `Error: the helper stopped after ${config.max_steps} steps without finishing ${job}; its work is lost. Split the job, or do it yourself.`;
  }
  const status = (error as { status?: unknown }).status;
  const cause = typeof status === 'number' ? `the model answered HTTP ${status}` : error instanceof Error ? error.name : 'an unknown error';
  return `Error: the helper could not finish ${job} (${cause}).`;
}
