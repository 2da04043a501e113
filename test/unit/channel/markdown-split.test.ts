import { describe, expect, it } from 'vitest';
import { FEISHU_CARD_DIALECT } from '../../../channels/feishu/render.js';
import { openCodeFence, SplitPartRenderer } from '../../../src/channel/markdown.js';
import { splitText } from '../../../src/channel/split.js';
import { displayCardMarkdown } from '../../fakes/feishu/display.js';

describe('openCodeFence', () => {
  it.each([
    ['no code', 'just text', undefined],
    ['a closed block', '```js\nx\n```\n', undefined],
    ['a block left open', 'intro\n\n```js\nconst a = 1;\n', '```js'],
    ['a longer fence left open by a shorter closer', '````\n```\n', '````'],
    ['a tilde fence', '~~~ sh\nls\n', '~~~ sh'],
  ])('%s', (_name, markdown, fence) => {
    expect(openCodeFence(markdown)).toBe(fence);
  });
});

describe('SplitPartRenderer', () => {
  it('closes a code block a split cut, and reopens it in the next part', () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i} && <${i}>`).join('\n');
    const markdown = `Here:\n\n\`\`\`sh\n${code}\n\`\`\`\n\nDone *now*.`;
    const parts = splitText(markdown, 300);
    expect(parts.length).toBeGreaterThan(2);
    const renderer = new SplitPartRenderer(FEISHU_CARD_DIALECT);
    const shown = parts.map((part, index) => {
      const card = renderer.render(part, index > 0);
      expect(openCodeFence(card)).toBeUndefined();
      return displayCardMarkdown(card).shown;
    });
    expect(shown.join('\n').replace(/\n+/g, '\n')).toBe(`Here:\n${code}\nDone now.`);
  });

  it('reopens nothing for a part that does not continue the one before', () => {
    const renderer = new SplitPartRenderer(FEISHU_CARD_DIALECT);
    renderer.render('```\nopen', false);
    expect(renderer.render('*fresh*', false)).toBe('*fresh*');
  });
});
