import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { conversationForMemory } from '../../../../src/agent/memory/conversation.js';

describe('conversationForMemory', () => {
  it('keeps user inputs and final answers, in order, and drops everything else', () => {
    const turns = conversationForMemory([
      new SystemMessage('You are a helpful bot.'),
      new HumanMessage('I maintain the billing service in Go.'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'bash', args: { command: 'ls' } }] }),
      new AIMessage({ content: 'Let me look.', tool_calls: [{ id: 'c2', name: 'ls', args: { path: '/' } }] }),
      new ToolMessage({ content: 'main.go', tool_call_id: 'c1' }),
      new AIMessage('Your repository has main.go.'),
      new HumanMessage({ content: 'Uploaded: report.pdf', additional_kwargs: { hide_from_ui: true } }),
      new HumanMessage('Thanks!'),
    ]);

    expect(turns).toEqual([
      { role: 'user', content: 'I maintain the billing service in Go.' },
      { role: 'assistant', content: 'Your repository has main.go.' },
      { role: 'user', content: 'Thanks!' },
    ]);
  });

  it('removes injected context and reasoning, and drops turns left empty', () => {
    const turns = conversationForMemory([
      new HumanMessage('<memory>\n- [preference] Likes tea\n</memory>\nWhat is new in Node 22?'),
      new HumanMessage('<uploaded_files>\n/mnt/user-data/uploads/a.csv\n</uploaded_files>'),
      new AIMessage('<think>The user asks about Node.</think>Node 22 adds require(esm).'),
    ]);

    expect(turns).toEqual([
      { role: 'user', content: 'What is new in Node 22?' },
      { role: 'assistant', content: 'Node 22 adds require(esm).' },
    ]);
  });

  it('reads the text blocks of structured content', () => {
    const turns = conversationForMemory([
      new HumanMessage({
        content: [
          { type: 'text', text: 'Describe this picture.' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      }),
    ]);

    expect(turns).toEqual([{ role: 'user', content: 'Describe this picture.' }]);
  });

  it('keeps the newest whole turns within the character budget', () => {
    const messages = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? new HumanMessage(`${i}`.padEnd(100, 'u')) : new AIMessage(`${i}`.padEnd(100, 'a')),
    );

    const turns = conversationForMemory(messages, 350);

    expect(turns.map((turn) => turn.content[0])).toEqual(['7', '8', '9']);
    expect(turns.every((turn) => turn.content.length === 100)).toBe(true);
  });

  it('keeps the beginning of a newest turn that alone exceeds the budget', () => {
    const turns = conversationForMemory([new HumanMessage('old question'), new HumanMessage(`start ${'x'.repeat(500)}`)], 100);

    expect(turns).toHaveLength(1);
    expect(turns[0]?.content.startsWith('start ')).toBe(true);
    expect(turns[0]?.content.length).toBeLessThanOrEqual(100);
  });

  it('returns no turns for a conversation of only tool steps', () => {
    expect(
      conversationForMemory([
        new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'bash', args: {} }] }),
        new ToolMessage({ content: 'done', tool_call_id: 'c1' }),
      ]),
    ).toEqual([]);
  });
});
