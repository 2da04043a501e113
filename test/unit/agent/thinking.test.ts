import { describe, expect, it } from 'vitest';
import { withoutThinking } from '../../../src/agent/thinking.js';

describe('withoutThinking', () => {
  it.each([
    ['text without think tags, as it is', '  Plain answer about "thinking".  ', '  Plain answer about "thinking".  '],
    ['a closed block, and the white space after it', '<think>step 1\nstep 2</think>\n\nThe answer.', 'The answer.'],
    ['several blocks, any case, with attributes', '<THINK>a</THINK>One. <think type="x">b</think >Two.', 'One. Two.'],
    ['a lone closing tag (the server stripped the opening one)', 'reasoning here</think>\nThe answer.', 'The answer.'],
    ['an unclosed block: still thinking', 'Intro. <think>working on it', 'Intro. '],
    ['only thinking so far', '<think>hmm', ''],
    ['a partial tag streamed so far, kept until it is one', 'The answer <thi', 'The answer <thi'],
  ])('reads %s', (_case, text, expected) => {
    expect(withoutThinking(text)).toBe(expected);
  });
});
