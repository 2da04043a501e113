import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeChatRequest } from '../fakes/openai/index.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * A photo sent in Telegram, through the real server, to a model marked `supports_vision`: it
 * reaches the model as a picture it can read, within the providers' size limits.
 */

const CHAT_ID = 9200;

let setup: TelegramSetup | undefined;

describe('a photo sent to a model that sees pictures', () => {
  beforeAll(async () => {
    setup = await startTelegramChat('supports_vision: true');
  });
  afterAll(() => setup?.stop());

  it('reaches the model as an image, scaled within its limits, and the answer reaches the chat', async () => {
    const { telegram, model } = setup as TelegramSetup;
    model.respond = () => ({ text: 'A red rectangle.' });
    const bytes = await sharp({ create: { width: 2560, height: 1920, channels: 3, background: '#cc2222' } }).jpeg().toBuffer();
    const sent = telegram.sendUserPhoto({
      chatId: CHAT_ID,
      chatType: 'private',
      caption: 'What is in this picture?',
      photo: [
        { bytes: await sharp(bytes).resize(320).jpeg().toBuffer(), width: 320, height: 240 },
        { bytes, width: 2560, height: 1920 },
      ],
    });
    await telegram.waitFor(() => telegram.botMessages(CHAT_ID).find((m) => m.replyTo === sent.message_id && m.text === 'A red rectangle.'), 30_000);

    const request = model.requests.at(-1) as FakeChatRequest;
    const content = request.messages.at(-1)?.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(content[0]?.text).toContain('What is in this picture?');
    const image = content.find((part) => part.type === 'image_url');
    expect(image?.image_url?.url).toMatch(/^data:image\/jpeg;base64,/);
    const seen = await sharp(Buffer.from((image?.image_url?.url ?? '').split(',')[1] ?? '', 'base64')).metadata();
    expect([seen.width, seen.height]).toEqual([1568, 1176]);
    expect(telegram.rateLimitViolations).toEqual([]);
  }, 60_000);
});
