import { describe, expect, it } from 'vitest';
import { toSampleMarkdown } from '../../../../channels/dingtalk/render.js';

describe('toSampleMarkdown', () => {
  it.each([
    ['plain text stays', 'Hello **world**', 'Hello **world**'],
    ['inline code becomes bold', 'run `npm test` now', 'run **npm test** now'],
    ['a fence becomes quoted lines under its language', '```ts\nconst a = 1;\n```', '> **ts**\n> const a = 1;'],
    ['a fence without language has no header', '```\nx\n```', '> x'],
    ['an unclosed fence quotes to the end', '```\nx\ny', '> x\n> y'],
    ['rules become a line', 'a\n---\nb', 'a\n───────────\nb'],
    ['tables become header: cell lines per row', '| Name | Age |\n| --- | ---: |\n| Ann | 3 |\n| Bo | 4 |', '> **Name**: Ann\n> **Age**: 3\n\n> **Name**: Bo\n> **Age**: 4\n'],
    ['a pipe line without separator is text', '| not | a table |', '| not | a table |'],
    ['inline code inside fences is kept', '```\n`x`\n```', '> `x`'],
  ])('%s', (_name, input, expected) => {
    expect(toSampleMarkdown(input)).toBe(expected);
  });
});
