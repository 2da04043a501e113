import { describe, expect, it } from 'vitest';
import { memoryConfigSchema } from '../../../../src/agent/memory/config.js';

describe('memoryConfigSchema', () => {
  it('fills every default from an absent section', () => {
    expect(memoryConfigSchema.parse(undefined)).toEqual({
      enabled: true,
      injection_enabled: true,
      debounce_seconds: 30,
      max_facts: 100,
      fact_confidence_threshold: 0.7,
      max_injection_tokens: 2000,
    });
  });

  it.each([
    ['an unknown key', { debounce: 5 }],
    ['a negative debounce', { debounce_seconds: -1 }],
    ['a threshold above 1', { fact_confidence_threshold: 1.5 }],
    ['zero facts', { max_facts: 0 }],
    ['an empty model name', { model_name: '' }],
  ])('rejects %s', (_, section) => {
    expect(memoryConfigSchema.safeParse(section).success).toBe(false);
  });

  it('accepts a zero debounce and a model name', () => {
    expect(memoryConfigSchema.parse({ debounce_seconds: 0, model_name: 'cheap' })).toMatchObject({
      debounce_seconds: 0,
      model_name: 'cheap',
    });
  });
});
