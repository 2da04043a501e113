import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_TOOL_RESULT, withInterruptedToolCallsClosed } from '../../../src/agent/interrupted-tool-calls.js';

const call = (id: string) => ({ id, name: 'bash', args: { command: 'gh issue comment 7 --body hi' }, type: 'tool_call' as const });
const result = (id: string) => new ToolMessage({ tool_call_id: id, name: 'bash', content: 'done' });

describe('withInterruptedToolCallsClosed', () => {
  it('leaves a thread whose every tool call has its result as it is', () => {
    const messages = [new HumanMessage('fix it'), new AIMessage({ content: '', tool_calls: [call('a'), call('b')] }), result('b'), result('a'), new AIMessage('fixed')];
    expect(withInterruptedToolCallsClosed(messages)).toBe(messages);
  });

  it('gives each call a crash cut short the interrupted note, before the next message, without changing the thread', () => {
    const messages = [
      new HumanMessage('fix it'),
      new AIMessage({ content: '', tool_calls: [call('a'), call('b')] }),
      result('a'),
      new HumanMessage('fix it (taken up again)'),
    ];
    const closed = withInterruptedToolCallsClosed(messages);
    expect(closed.map((m) => [m.getType(), m.getType() === 'tool' ? (m as ToolMessage).tool_call_id : m.content])).toEqual([
      ['human', 'fix it'],
      ['ai', ''],
      ['tool', 'b'],
      ['tool', 'a'],
      ['human', 'fix it (taken up again)'],
    ]);
    expect((closed[2] as ToolMessage).content).toBe(INTERRUPTED_TOOL_RESULT);
    expect(messages).toHaveLength(4);
  });

  it('closes a call left last in the thread', () => {
    const closed = withInterruptedToolCallsClosed([new HumanMessage('go'), new AIMessage({ content: '', tool_calls: [call('z')] })]);
    expect(closed.at(-1)).toMatchObject({ tool_call_id: 'z', content: INTERRUPTED_TOOL_RESULT });
  });
});
