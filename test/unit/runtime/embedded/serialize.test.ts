import { AIMessage, AIMessageChunk, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { pickStreamMetadata, serializeMessage, streamMetadataPicker } from '../../../../src/runtime/embedded/serialize.js';

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

describe('pickStreamMetadata', () => {
  /** What LangGraph hands with a streamed token: the run's config beside the keys clients read. */
  const metadata = () =>
    Object.assign(Object.create({ langgraph_inherited: 'not its own' }), {
      langgraph_step: 1,
      langgraph_node: 'agent',
      ls_provider: 'openai',
      thread_id: 't-1',
      run_id: 'r-1',
      langgraph_triggers: ['branch:to:agent'],
      callbacks: { handlers: [] },
      __sandbox_secrets__: { GH_TOKEN: 'secret' },
      user_id: 'telegram_1',
    });

  it('keeps only the scalar values of the keys clients use, never config or secrets', () => {
    expect(pickStreamMetadata(metadata())).toEqual({ langgraph_step: 1, langgraph_node: 'agent', ls_provider: 'openai', thread_id: 't-1', run_id: 'r-1' });
    expect(pickStreamMetadata(null)).toEqual({});
    expect(pickStreamMetadata('metadata')).toEqual({});
  });

  it('picks once per metadata object when streaming, and anew for a new one', () => {
    const pick = streamMetadataPicker();
    const first = metadata();
    expect(pick(first)).toBe(pick(first));
    const second = { ...metadata(), langgraph_step: 2 };
    expect(pick(second)).toEqual({ langgraph_step: 2, langgraph_node: 'agent', ls_provider: 'openai', thread_id: 't-1', run_id: 'r-1' });
    expect(pick(undefined)).toEqual({});
  });
});
