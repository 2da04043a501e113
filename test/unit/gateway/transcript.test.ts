import { describe, expect, it } from 'vitest';
import { errorKindOf } from '../../../src/gateway/routes/runs.js';
import { toTranscript } from '../../../src/gateway/transcript.js';

describe('toTranscript', () => {
  it.each([
    ['no state yet', undefined, []],
    ['not a list', { messages: 'x' }, []],
    ['a plain exchange', [{ type: 'human', content: 'hi' }, { type: 'ai', content: 'hello' }], [{ role: 'user', text: 'hi' }, { role: 'assistant', text: 'hello' }]],
    [
      'text blocks joined, pictures left out',
      [{ type: 'human', content: [{ type: 'text', text: 'look ' }, { type: 'image_url', image_url: { url: 'data:...' } }, { type: 'text', text: 'here' }] }],
      [{ role: 'user', text: 'look here' }],
    ],
    [
      'what the person typed, not the server notes added to it',
      [{ type: 'human', content: 'hi\n\n[uploaded: a.txt]', additional_kwargs: { original_user_content: 'hi' } }],
      [{ role: 'user', text: 'hi' }],
    ],
    [
      'tool calls by name only; their results and hidden or system messages left out',
      [
        { type: 'system', content: 'you are' },
        { type: 'human', content: 'run it' },
        { type: 'ai', content: '', tool_calls: [{ name: 'bash', args: { command: 'cat secret' }, id: 'c1' }] },
        { type: 'tool', content: 'secret output', tool_call_id: 'c1', name: 'bash' },
        { type: 'human', content: 'summary of earlier', additional_kwargs: { hide_from_ui: true } },
        { type: 'ai', content: 'done' },
      ],
      [{ role: 'user', text: 'run it' }, { role: 'tool', text: 'bash' }, { role: 'assistant', text: 'done' }],
    ],
  ])('%s', (_name, messages, expected) => {
    expect(toTranscript(messages)).toEqual(expected);
  });
});

describe('errorKindOf', () => {
  it.each([
    [null, null],
    ['', null],
    ['model call failed: unavailable, Error (HTTP 500)', 'model call failed'],
    ['lease expired: the process running it stopped', 'lease expired'],
    ['run cancelled', 'run cancelled'],
  ])('%s → %s', (error, kind) => {
    expect(errorKindOf(error)).toBe(kind);
  });
});
