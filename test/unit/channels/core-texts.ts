import { INGRESS_TEXTS } from '../../../src/channel/ingress/pipeline.js';
import { MESSAGES } from '../../../src/manager/messages.js';

/**
 * Core's own texts, which reach every platform as Markdown like the agent's answers, each with what
 * the person must see: the fixed ones exactly as written, the ones quoting somebody's words (a
 * model's name, an agent's, a typed command) with those words as written. No quoted word here
 * holds a pair of `*` or `_`: Slack's mrkdwn cannot escape them (its own test says so).
 */
export const CORE_TEXTS: readonly (readonly [markdown: string, shown: string])[] = [
  ...Object.entries(MESSAGES)
    .filter(([name, value]) => typeof value === 'string' && name !== 'streamingCursor')
    .map(([, value]) => [value as string, value as string] as const),
  [MESSAGES.unknownCommand('foo_bar', ['new', 'help']), 'Unknown command: /foo_bar. Available commands: /new | /help'],
  [MESSAGES.modelList(['gpt_4o_mini', 'a*b|c', 'qwen-2.5']), 'Available models:\n• gpt_4o_mini\n• a*b|c\n• qwen-2.5'],
  [
    MESSAGES.agentList('default', [{ name: 'db_admin', description: 'runs <sql> & [reports]' }]),
    'Current agent: default\nAgents you can talk to:\n• db_admin — runs <sql> & [reports]\nSwitch with /agent <name>; /agent default goes back to the default.',
  ],
  [MESSAGES.agentUnavailable('x_y', ['default', 'code_review']), "No agent named 'x_y' is available to you. Agents you can talk to: default, code_review."],
  [MESSAGES.goal('ship v2_final & <tag> it'), 'Goal: ship v2_final & <tag> it'],
  [MESSAGES.attachmentUnavailable('PLATFORM', 'a_b.pdf', 'too big'), '[PLATFORM attachment unavailable: a_b.pdf (too big)]'],
  [MESSAGES.memoryCount(3), 'Memory contains 3 fact(s).'],
  [INGRESS_TEXTS.busy, INGRESS_TEXTS.busy],
];
