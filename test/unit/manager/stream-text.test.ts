import { describe, expect, it } from 'vitest';
import { StreamText, UpdateThrottle } from '../../../src/manager/stream-text.js';

const ai = (content: unknown, id = 'm1') => [{ type: 'ai', id, content }, { langgraph_node: 'agent' }];

describe('StreamText', () => {
  it.each([
    ['appends deltas', ['Hel', 'lo'], 'Hello'],
    ['replaces with a strictly longer cumulative chunk', ['Hel', 'Hello wor', 'Hello world'], 'Hello world'],
    ['appends a repeated token (it is a delta, not a repeat)', ['ha', 'ha'], 'haha'],
    ['keeps CJK deltas intact', ['你好', '，世界'], '你好，世界'],
    ['keeps newline-split deltas', ['line 1\n', 'line 2'], 'line 1\nline 2'],
  ])('%s', (_name, chunks, expected) => {
    const text = new StreamText();
    for (const chunk of chunks) text.accept(ai(chunk));
    expect(text.text).toBe(expected);
  });

  it.each([
    ['human echo', { type: 'human', content: 'my secret question' }],
    ['tool output', { type: 'tool', content: 'rm -rf output' }],
    ['system prompt', { type: 'system', content: 'You are DeerFlow' }],
    ['a bare string', 'raw text'],
    ['hidden memory context', { type: 'human', content: '<memory>facts</memory>' }],
  ])('never shows %s', (_name, payload) => {
    const text = new StreamText();
    expect(text.accept([payload, {}])).toBe(false);
    expect(text.text).toBe('');
  });

  it('accepts every assistant spelling', () => {
    for (const type of ['ai', 'AIMessageChunk', 'assistant']) {
      const text = new StreamText();
      text.accept([{ type, id: 'x', content: 'ok' }, {}]);
      expect(text.text).toBe('ok');
    }
  });

  it('shows only the message being written now, each with its own buffer', () => {
    const text = new StreamText();
    text.accept(ai('First thought.', 'a'));
    text.accept(ai('Second', 'b'));
    expect(text.text).toBe('Second');
    text.accept(ai(' answer', 'b'));
    expect(text.text).toBe('Second answer');
  });

  it('never shows what a reasoning model thinks, and tells no change while it only thinks', () => {
    const text = new StreamText();
    const seen: string[] = [];
    for (const chunk of ['<think>', 'the user wants', ' a secret plan', '</think>', '\n\nThe ', 'answer.']) {
      if (text.accept(ai(chunk))) seen.push(text.text);
    }
    expect(seen).toEqual(['The ', 'The answer.']);
    // Reasoning kept in its own content block never counts as text either.
    const blocks = new StreamText();
    expect(blocks.accept(ai([{ type: 'reasoning', reasoning: 'hmm' }]))).toBe(false);
    expect(blocks.text).toBe('');
  });

  it('reads text blocks of structured content', () => {
    const text = new StreamText();
    text.accept(ai([{ type: 'text', text: 'a' }, { type: 'image_url', image_url: 'x' }, { type: 'text', text: 'b' }]));
    expect(text.text).toBe('ab');
  });
});

describe('UpdateThrottle', () => {
  it('publishes the first text at once, then after 1 s or 60 new characters', () => {
    let now = 0;
    const throttle = new UpdateThrottle(() => now);
    expect(throttle.shouldPublish('a')).toBe(true);
    now = 500;
    expect(throttle.shouldPublish('ab')).toBe(false);
    expect(throttle.shouldPublish(`a${'x'.repeat(60)}`)).toBe(true);
    now = 900;
    expect(throttle.shouldPublish(`a${'x'.repeat(61)}`)).toBe(false);
    now = 1900;
    expect(throttle.shouldPublish(`a${'x'.repeat(62)}`)).toBe(true);
  });
});
