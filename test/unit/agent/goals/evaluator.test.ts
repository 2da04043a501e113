import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import {
  latestVisibleAssistantText,
  MAX_TRANSCRIPT_CHARS,
  parseJudgement,
  visibleTranscript,
} from '../../../../src/agent/goals/evaluator.js';

const hidden = (text: string) => new HumanMessage({ content: text, additional_kwargs: { hide_from_ui: true } });
const toolCallOnly = () =>
  new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'bash', args: { command: 'ls' } }] });

describe('visibleTranscript', () => {
  it('labels visible turns and leaves out tool output, hidden and system messages, and tool-call-only steps', () => {
    const messages: BaseMessage[] = [
      new SystemMessage('SYSTEM PROMPT'),
      new HumanMessage('Make the tests pass'),
      toolCallOnly(),
      new ToolMessage({ content: 'TOOL OUTPUT: 3 failed', tool_call_id: 'call_1' }),
      new AIMessage('Two tests still fail.'),
      hidden('HIDDEN CONTINUATION'),
      new AIMessage({ content: [{ type: 'text', text: 'All tests pass now.' }] }),
    ];
    expect(visibleTranscript(messages)).toBe(
      'User: Make the tests pass\n\nAssistant: Two tests still fail.\n\nAssistant: All tests pass now.',
    );
  });

  it('is empty when nothing is visible', () => {
    expect(visibleTranscript([hidden('go on'), toolCallOnly(), new HumanMessage('   ')])).toBe('');
  });

  it('keeps the most recent whole turns when the conversation is too long', () => {
    const old = 'o'.repeat(7000);
    const recent = 'r'.repeat(7000);
    const transcript = visibleTranscript([new HumanMessage(old), new AIMessage(recent), new HumanMessage('status?')]);
    expect(transcript.length).toBeLessThanOrEqual(MAX_TRANSCRIPT_CHARS);
    expect(transcript).not.toContain('ooo');
    expect(transcript.startsWith('[earlier conversation omitted]')).toBe(true);
    expect(transcript.endsWith(`Assistant: ${recent}\n\nUser: status?`)).toBe(true);
  });

  it('keeps the end of a single turn longer than the limit', () => {
    const transcript = visibleTranscript([new AIMessage(`${'x'.repeat(20_000)}THE END`)]);
    expect(transcript.length).toBe(MAX_TRANSCRIPT_CHARS);
    expect(transcript).toMatch(/^\[earlier conversation omitted\]\n\nAssistant: …x+THE END$/);
  });
});

describe('latestVisibleAssistantText', () => {
  it('skips tool-call-only steps and hidden messages', () => {
    const messages = [new HumanMessage('go'), new AIMessage('  Step one done. '), hidden('continue'), toolCallOnly()];
    expect(latestVisibleAssistantText(messages)).toBe('Step one done.');
  });

  it('is empty without any assistant text', () => {
    expect(latestVisibleAssistantText([new HumanMessage('go'), toolCallOnly()])).toBe('');
  });
});

describe('parseJudgement', () => {
  it.each([
    ['plain JSON', '{"verdict":"satisfied","reason":"Done.","evidence":"The assistant said so."}', 'satisfied'],
    ['a json fence', '```json\n{"verdict":"blocked","reason":"No access.","evidence":""}\n```', 'blocked'],
    ['a bare fence', '```\n{"verdict":"not_met_yet","reason":"Half done."}\n```', 'not_met_yet'],
    ['a think block', '<think>{"verdict":"satisfied"} maybe</think>\n{"verdict":"needs_user_input","reason":"Which repo?"}', 'needs_user_input'],
    ['prose around the object', 'Here you go: {"verdict":"not_met_yet","reason":"x"} Hope it helps.', 'not_met_yet'],
  ])('reads %s', (_what, answer, verdict) => {
    expect(parseJudgement(answer).verdict).toBe(verdict);
  });

  it.each([
    ['garbage', 'I think it is done!', 'evaluator answer held no JSON object'],
    ['broken JSON', '{"verdict": satisfied}', 'evaluator answer was not valid JSON'],
    ['an unknown verdict', '{"verdict":"done","reason":"ok"}', 'evaluator answer had no known verdict'],
    ['our own failure verdict', '{"verdict":"evaluation_failed","reason":"ok"}', 'evaluator answer had no known verdict'],
    ['no reason', '{"verdict":"satisfied"}', 'evaluator answer was missing its reason'],
    ['an answer cut off while thinking', '<think>{"verdict":"satisfied","reason":"x"}', 'evaluator answer held no JSON object'],
  ])('turns %s into evaluation_failed', (_what, answer, reason) => {
    expect(parseJudgement(answer)).toEqual({ verdict: 'evaluation_failed', reason, evidence: '' });
  });

  it('tidies reason and evidence to one short line each and drops malformed evidence', () => {
    const long = parseJudgement(
      JSON.stringify({ verdict: 'not_met_yet', reason: ` Tests\n still   fail ${'!'.repeat(2000)}`, evidence: 'Log:\n\n 2 failed' }),
    );
    expect(long.reason.startsWith('Tests still fail !')).toBe(true);
    expect(long.reason).toHaveLength(1000);
    expect(long.evidence).toBe('Log: 2 failed');
    expect(parseJudgement('{"verdict":"blocked","reason":"No token.","evidence":12}')).toEqual({
      verdict: 'blocked',
      reason: 'No token.',
      evidence: '',
    });
  });
});
