import { describe, expect, it } from 'vitest';
import { endsInClarification, extractFinalText } from '../../../src/manager/response.js';

describe('extractFinalText', () => {
  it("shows a reasoning model's answer without its <think> text, and skips a message that only thinks", () => {
    const values = {
      messages: [
        { type: 'human', content: 'question' },
        { type: 'ai', content: '<think>answer after checking</think>', tool_calls: [{ name: 'search' }] },
        { type: 'tool', content: 'found it' },
        { type: 'ai', content: '<think>private reasoning</think>\n\nThe answer.' },
        { type: 'ai', content: '<think>still thinking about more' },
      ],
    };
    expect(extractFinalText(values)).toBe('The answer.');
  });

  it('returns the last assistant text of the current turn only', () => {
    const values = {
      messages: [
        { type: 'human', content: 'old question' },
        { type: 'ai', content: 'old answer' },
        { type: 'human', content: 'new question' },
        { type: 'ai', content: '', tool_calls: [{ name: 'search' }] },
        { type: 'tool', content: 'tool output must not leak' },
        { type: 'ai', content: 'new answer' },
      ],
    };
    expect(extractFinalText(values)).toBe('new answer');
  });

  it('never falls back to an earlier turn when the current turn has no text', () => {
    const values = {
      messages: [
        { type: 'human', content: 'q1' },
        { type: 'ai', content: 'a1' },
        { type: 'human', content: 'q2' },
        { type: 'tool', content: 'only a tool result' },
      ],
    };
    expect(extractFinalText(values)).toBe('');
  });

  it('answers with the question when the turn ended in ask_clarification', () => {
    const values = {
      messages: [
        { type: 'human', content: 'deploy it' },
        { type: 'ai', content: 'Let me check first.', tool_calls: [{ name: 'ask_clarification' }] },
        { type: 'tool', name: 'ask_clarification', content: 'Which environment: staging or production?' },
      ],
    };
    expect(extractFinalText(values)).toBe('Which environment: staging or production?');
  });

  it('shows every visible step of a goal loop, oldest first, and nothing of the hidden prompts', () => {
    const values = {
      messages: [
        { type: 'human', content: 'old question' },
        { type: 'ai', content: 'old answer' },
        { type: 'human', content: 'reach the goal' },
        { type: 'ai', content: 'Step one done.' },
        { type: 'human', content: 'Keep working toward the goal', additional_kwargs: { hide_from_ui: true } },
        { type: 'ai', content: '', tool_calls: [{ name: 'bash' }] },
        { type: 'tool', content: 'tool output' },
        { type: 'ai', content: 'Step two done.' },
        { type: 'human', content: 'Keep working', additional_kwargs: { hide_from_ui: true } },
        { type: 'ai', content: '' },
      ],
    };
    expect(extractFinalText(values)).toBe('Step one done.\n\nStep two done.');
  });

  it('skips hidden human messages when looking for the turn boundary', () => {
    const values = {
      messages: [
        { type: 'human', content: 'question' },
        { type: 'ai', content: 'answer' },
        { type: 'human', content: '<system-reminder>', additional_kwargs: { hide_from_ui: true } },
      ],
    };
    expect(extractFinalText(values)).toBe('answer');
  });

  it('handles missing or malformed state', () => {
    expect(extractFinalText(undefined)).toBe('');
    expect(extractFinalText({ messages: 'nope' })).toBe('');
    expect(extractFinalText({ messages: [null, 3, { type: 'ai', content: 'ok' }] })).toBe('ok');
  });
});

describe('endsInClarification', () => {
  const asked = [
    { type: 'human', content: 'deploy it' },
    { type: 'ai', content: '', tool_calls: [{ name: 'ask_clarification' }] },
    { type: 'tool', name: 'ask_clarification', content: 'Which environment?' },
  ];

  it('is true when the turn ended with the question', () => {
    expect(endsInClarification({ messages: asked })).toBe(true);
  });

  it('is false when the agent went on after asking', () => {
    expect(endsInClarification({ messages: [...asked, { type: 'ai', content: 'Never mind, staging it is.' }] })).toBe(false);
    expect(endsInClarification({ messages: [...asked, { type: 'ai', content: '', tool_calls: [{ name: 'bash' }] }] })).toBe(false);
  });

  it("is false when the question belongs to an earlier turn, or a goal loop went on after it", () => {
    expect(endsInClarification({ messages: [...asked, { type: 'human', content: 'staging' }, { type: 'ai', content: 'Deployed.' }] })).toBe(false);
    expect(endsInClarification({ messages: [...asked, { type: 'human', content: 'Keep working', additional_kwargs: { hide_from_ui: true } }] })).toBe(false);
  });

  it('ignores empty assistant messages after the question, and odd input', () => {
    expect(endsInClarification({ messages: [...asked, { type: 'ai', content: '' }] })).toBe(true);
    expect(endsInClarification(undefined)).toBe(false);
    expect(endsInClarification({ messages: 'nope' })).toBe(false);
  });
});
