import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { contextBudget, firstKeptIndex, messagesTokens, messageTokens, withToolResultsShortened } from '../../../../src/agent/context/window.js';

/** 400 characters: 100 estimated tokens of text. */
const TEXT_100 = 'abcd'.repeat(100);

function turn(n: number, options: { toolOutput?: string } = {}): BaseMessage[] {
  const person = new HumanMessage(`question ${n} ${TEXT_100}`);
  if (options.toolOutput === undefined) return [person, new AIMessage(`answer ${n} ${TEXT_100}`)];
  const call = new AIMessage({ content: '', tool_calls: [{ id: `call-${n}`, name: 'bash', args: { command: 'ls' } }] });
  const result = new ToolMessage({ content: options.toolOutput, tool_call_id: `call-${n}`, name: 'bash' });
  return [person, call, result, new AIMessage(`answer ${n}`)];
}

describe('contextBudget', () => {
  it('leaves the answer its reserve and gives the summary a bounded share', () => {
    expect(contextBudget(8_000, { answer_reserve: 0.25, keep_recent: 0.5 })).toEqual({ input: 6_000, summary: 900, keepShare: 0.5 });
    expect(contextBudget(128_000, { answer_reserve: 0.25, keep_recent: 0.5 }).summary).toBe(2_000);
  });
});

describe('messageTokens', () => {
  it('counts text, tool calls and images, and the same message the same each time', () => {
    const text = new HumanMessage(TEXT_100);
    expect(messageTokens(text)).toBe(104);
    expect(messageTokens(text)).toBe(104);
    const call = new AIMessage({ content: '', tool_calls: [{ id: 'c', name: 'bash', args: { command: 'x'.repeat(400) } }] });
    expect(messageTokens(call)).toBeGreaterThan(100);
    const picture = new HumanMessage({ content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] });
    expect(messageTokens(picture)).toBeGreaterThanOrEqual(1_000);
  });
});

describe('firstKeptIndex', () => {
  it('keeps the newest whole turns that fit and folds the rest', () => {
    const messages = [1, 2, 3, 4, 5].flatMap((n) => turn(n));
    // Each turn is ~210 tokens: three fit in 650.
    expect(firstKeptIndex(messages, 650)).toBe(4);
  });

  it('never folds the turn being answered, however large', () => {
    const messages = [...turn(1), ...turn(2, { toolOutput: 'x'.repeat(40_000) })];
    expect(firstKeptIndex(messages, 100)).toBe(2);
  });

  it('cuts only where a person began a turn, so no tool call is parted from its result', () => {
    const messages = [1, 2, 3, 4].flatMap((n) => turn(n, { toolOutput: TEXT_100 }));
    for (let keep = 0; keep < messagesTokens(messages); keep += 37) {
      const cut = firstKeptIndex(messages, keep);
      expect(messages[cut]?.getType()).toBe('human');
      expect(cut % 4).toBe(0);
    }
  });

  it('does not cut before messages the server added inside a turn (hide_from_ui)', () => {
    const hidden = new HumanMessage({ content: `continue ${TEXT_100}`, additional_kwargs: { hide_from_ui: true } });
    const messages = [...turn(1), ...turn(2), hidden, new AIMessage(`more ${TEXT_100}`)];
    expect(firstKeptIndex(messages, 250)).toBe(2);
  });

  it('folds nothing when the only turn is the current one', () => {
    expect(firstKeptIndex(turn(1), 0)).toBe(0);
  });
});

describe('withToolResultsShortened', () => {
  it('shortens the oldest tool output first until the messages fit, keeping its head and tail', () => {
    const old = `HEAD${'o'.repeat(20_000)}TAIL`;
    const messages = [...turn(1, { toolOutput: old }), ...turn(2, { toolOutput: 'n'.repeat(4_000) })];
    const limit = messagesTokens(messages) - 3_000;
    const shortened = withToolResultsShortened(messages, limit);
    expect(messagesTokens(shortened)).toBeLessThanOrEqual(limit);
    const first = shortened[2] as ToolMessage;
    expect(first.content).toMatch(/^HEAD/);
    expect(first.content).toMatch(/TAIL$/);
    expect(first.content).toContain("left out to fit the model's context");
    expect(first.tool_call_id).toBe('call-1');
    expect(shortened[6]).toBe(messages[6]);
    // The thread's own messages are untouched.
    expect((messages[2] as ToolMessage).content).toBe(old);
  });

  it('returns the messages as they are when they fit', () => {
    const messages = turn(1, { toolOutput: 'small' });
    expect(withToolResultsShortened(messages, 10_000)).toEqual(messages);
  });
});
