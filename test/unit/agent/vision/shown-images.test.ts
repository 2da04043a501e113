import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import type { EncodedImage } from '../../../../src/agent/vision/encode.js';
import { type ImageReader, imagesShownCount, withImagesShown } from '../../../../src/agent/vision/shown-images.js';

/** A reader that "encodes" a path as a data URL naming it, and counts its reads. */
function countingReader(): { read: ImageReader; reads: string[] } {
  const reads: string[] = [];
  const read: ImageReader = async (_config, path) => {
    reads.push(path);
    return { part: { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${path}` } }, width: 1, height: 1 } satisfies EncodedImage;
  };
  return { read, reads };
}

function sent(text: string, paths: string[]): HumanMessage {
  return new HumanMessage({
    content: text,
    additional_kwargs: { files: paths.map((path) => ({ filename: path.split('/').at(-1), size: 1, path, is_image: !path.endsWith('.txt') })) },
  });
}

function viewCall(id: string): AIMessage {
  return new AIMessage({ content: '', tool_calls: [{ id, name: 'view_image', args: {} }] });
}

function viewed(id: string, path: string): ToolMessage {
  return new ToolMessage({ content: `Showing ${path}`, tool_call_id: id, name: 'view_image', artifact: { path } });
}

const urlsOf = (message: BaseMessage | undefined): string[] =>
  Array.isArray(message?.content) ? message.content.flatMap((part) => (part.type === 'image_url' ? [(part as unknown as { image_url: { url: string } }).image_url.url] : [])) : [];

describe('withImagesShown', () => {
  it('adds the pictures sent with the message being answered, not those of older turns or other files', async () => {
    const { read } = countingReader();
    const messages = [sent('old', ['/u/old.png']), new AIMessage('seen'), sent('new', ['/u/a.png', '/u/notes.txt'])];
    const shown = await withImagesShown(messages, read, {});
    expect(shown[0]).toBe(messages[0]);
    expect(urlsOf(shown[2])).toEqual(['data:image/jpeg;base64,/u/a.png']);
    expect(((shown[2] as BaseMessage).content as { type: string; text?: string }[])[0]).toEqual({ type: 'text', text: 'new' });
  });

  it('puts an opened picture after the whole run of tool results, so no call is parted from its results', async () => {
    const { read } = countingReader();
    const calls = new AIMessage({
      content: '',
      tool_calls: [
        { id: 'a', name: 'view_image', args: {} },
        { id: 'b', name: 'ls', args: {} },
      ],
    });
    const messages = [sent('look', []), calls, viewed('a', '/o/chart.png'), new ToolMessage({ content: 'files', tool_call_id: 'b', name: 'ls' })];
    const shown = await withImagesShown(messages, read, {});
    expect(shown.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'tool', 'human']);
    expect(urlsOf(shown[4])).toEqual(['data:image/jpeg;base64,/o/chart.png']);
    expect(shown[4]?.additional_kwargs.hide_from_ui).toBe(true);
  });

  it('reads each picture once across the model calls of a turn', async () => {
    const { read, reads } = countingReader();
    const messages = [sent('look', ['/u/a.png']), viewCall('a'), viewed('a', '/o/b.png')];
    await withImagesShown(messages, read, {});
    await withImagesShown([...messages, viewCall('c'), viewed('c', '/o/c.png')], read, {});
    expect(reads).toEqual(['/u/a.png', '/o/b.png', '/o/c.png']);
  });

  it('sends at most eight pictures a request', async () => {
    const { read } = countingReader();
    const paths = Array.from({ length: 6 }, (_, i) => `/u/${i}.png`);
    const messages: BaseMessage[] = [sent('many', paths)];
    for (let i = 0; i < 4; i++) messages.push(viewCall(`v${i}`), viewed(`v${i}`, `/o/${i}.png`));
    const shown = await withImagesShown(messages, read, {});
    expect(shown.flatMap(urlsOf)).toHaveLength(8);
    expect(imagesShownCount(messages)).toBe(8);
  });

  it('says so when a picture cannot be read', async () => {
    const read: ImageReader = async () => {
      throw new Error('disk on fire at /srv/data/secret');
    };
    const shown = await withImagesShown([sent('look', ['/u/a.png'])], read, {});
    const texts = ((shown[0] as BaseMessage).content as { type: string; text?: string }[]).map((part) => part.text);
    expect(texts).toEqual(['look', '(The picture cannot be shown: /u/a.png could not be read.)']);
  });
});
