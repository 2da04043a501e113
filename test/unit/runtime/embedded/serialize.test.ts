import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { serializeMessage } from '../../../../src/runtime/embedded/serialize.js';

/** What LangChain itself puts on the wire for a message: `toDict().data` and `type`. */
function viaToDict(message: BaseMessage): Record<string, unknown> {
  return { ...message.toDict().data, type: message.getType() };
}

describe('serializeMessage', () => {
  const messages: [string, BaseMessage][] = [
    ['a streamed text chunk', new AIMessageChunk({ content: 'hel', id: 'run-1', response_metadata: { model_provider: 'openai' } })],
    [
      'a chunk of a tool call, with usage',
      new AIMessageChunk({
        content: '',
        id: 'run-2',
        tool_call_chunks: [{ name: 'bash', args: '{"command": "ls', id: 'call_1', index: 0, type: 'tool_call_chunk' }],
        usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
      }),
    ],
    ['chunks concatenated', new AIMessageChunk({ content: 'hel', id: 'run-3' }).concat(new AIMessageChunk({ content: 'lo', id: 'run-3' }))],
    [
      'a finished answer with tool calls and an invalid one',
      new AIMessage({
        content: 'Let me look.',
        id: 'run-4',
        name: 'lead_agent',
        tool_calls: [{ name: 'bash', args: { command: 'ls' }, id: 'call_2', type: 'tool_call' }],
        invalid_tool_calls: [{ name: 'bash', args: '{oops', id: 'call_3', error: 'bad json', type: 'invalid_tool_call' }],
        additional_kwargs: { refusal: null },
      }),
    ],
    ['a tool result', new ToolMessage({ content: 'a.txt\nb.txt', tool_call_id: 'call_2', name: 'bash', status: 'success' })],
    ['what the person wrote, with files', new HumanMessage({ content: 'hi', id: 'h-1', additional_kwargs: { files: [{ filename: 'a.png', size: 3 }] } })],
    ['a system prompt', new SystemMessage('You are DeerFlow.')],
  ];

  it.each(messages)('puts %s on the wire exactly as LangChain does', (_name, message) => {
    expect(serializeMessage(message)).toEqual(viaToDict(message));
  });

  it('keeps content blocks (pictures) as LangChain serializes them', () => {
    const message = new HumanMessage({ content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA' } }] });
    expect(serializeMessage(message)).toEqual(viaToDict(message));
  });
});
