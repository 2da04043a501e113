import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { sandboxConfigSchema } from '../../../src/agent/sandbox/config.js';
import { createContextResolver } from '../../../src/agent/sandbox/context.js';
import { createImageReader, createSandboxTools } from '../../../src/agent/sandbox/tools.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { extractFinalText } from '../../../src/manager/response.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest } from '../../../src/runtime/types.js';
import { type FakeChatMessage, type FakeChatRequest, FakeOpenAI } from '../../fakes/openai/index.js';
import { openTestDatabase } from '../../helpers/database.js';

/**
 * Pictures through the embedded runtime and the real `ChatOpenAI`: what a model that sees them
 * and one that does not are sent, `view_image`, and what the thread keeps.
 */

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));
const USER = 'alice';

type ContentPart = { type: string; text?: string; image_url?: { url: string } };

function ask(text: string, modelName: string, files: { filename: string; size: number; path: string; is_image: boolean }[] = []): RunRequest {
  return {
    assistant_id: 'lead_agent',
    input: { messages: [{ role: 'human', content: text, additional_kwargs: files.length > 0 ? { files } : {} }] },
    context: { user_id: USER, model_name: modelName },
  };
}

function partsOf(message: FakeChatMessage | undefined): ContentPart[] {
  if (message === undefined || message.content === null) return [];
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content as ContentPart[]);
}

function systemPrompt(request: FakeChatRequest): string {
  return partsOf(request.messages[0]).map((part) => part.text ?? '').join('');
}

function toolNames(request: FakeChatRequest): string[] {
  return (request.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
}

/** Width and height of the picture in a `data:` URL. */
async function sizeOf(url: string | undefined): Promise<{ width: number; height: number; format: string }> {
  const [, base64] = (url ?? '').split(',');
  const { width, height, format } = await sharp(Buffer.from(base64 ?? '', 'base64')).metadata();
  return { width: width ?? 0, height: height ?? 0, format: format ?? '' };
}

describe('pictures through the embedded runtime', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let dataDir: string;
  let runtime: AgentRuntime;
  let photo: Buffer;

  /** Writes `bytes` to the thread's folder `area` as `name`; returns its virtual path. */
  async function put(threadId: string, area: 'uploads' | 'outputs', name: string, bytes: Uint8Array): Promise<string> {
    const dir = join(dataDir, 'users', USER, 'threads', threadId, 'user-data', area);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, name), bytes);
    return `/mnt/user-data/${area}/${name}`;
  }

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    dataDir = await mkdtemp(join(tmpdir(), 'dfc-pictures-'));
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    const base = { base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 };
    const models: ModelConfig[] = [
      { name: 'eyes', model: 'gpt-4o', supports_vision: true, ...base },
      { name: 'blind', model: 'gpt-3.5-turbo', ...base },
    ];
    const resolveContext = createContextResolver({ dataDir, skillsDir: join(dataDir, 'no-skills') });
    runtime = await createEmbeddedRuntime({
      db: database.db,
      models,
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      tools: createSandboxTools({ resolveContext, config: sandboxConfigSchema.parse({}), baseEnv: { PATH: process.env.PATH } }),
      readImage: createImageReader(resolveContext),
    });
    // A 3,000 × 2,000 photo: larger than any provider takes.
    photo = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
  });
  afterAll(async () => {
    await runtime?.close();
    await model?.stop();
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    model.requests.length = 0;
    model.respond = () => ({ text: 'A blue square.' });
  });

  it('shows a model that sees pictures the photo the person sent, scaled to 1,568 px', async () => {
    const threadId = (await runtime.createThread()).thread_id;
    const path = await put(threadId, 'uploads', 'photo.jpg', photo);
    const { values } = await runtime.waitRun(threadId, ask('What is this?', 'eyes', [{ filename: 'photo.jpg', size: photo.length, path, is_image: true }]));
    expect(extractFinalText(values)).toBe('A blue square.');

    const request = model.requests[0] as FakeChatRequest;
    const parts = partsOf(request.messages.at(-1));
    expect(parts[0]).toEqual({ type: 'text', text: 'What is this?' });
    expect(parts[1]?.type).toBe('image_url');
    expect(await sizeOf(parts[1]?.image_url?.url)).toEqual({ width: 1568, height: 1045, format: 'jpeg' });
    expect(systemPrompt(request)).toContain('The images are shown to you with the message.');
    expect(toolNames(request)).toContain('view_image');
    // The thread keeps the message as the person wrote it: no picture in the checkpoint.
    const state = await runtime.getThread(threadId);
    expect(JSON.stringify(state.values)).not.toContain('base64');
  });

  it('tells a model that does not see pictures that one arrived, where it is, and that it cannot see it', async () => {
    const threadId = (await runtime.createThread()).thread_id;
    const path = await put(threadId, 'uploads', 'photo.jpg', photo);
    await runtime.waitRun(threadId, ask('What is this?', 'blind', [{ filename: 'photo.jpg', size: photo.length, path, is_image: true }]));

    const request = model.requests[0] as FakeChatRequest;
    expect(request.messages.at(-1)?.content).toBe('What is this?');
    expect(systemPrompt(request)).toContain(`- ${path} (${photo.length} bytes, image)`);
    expect(systemPrompt(request)).toContain('You cannot see images in this conversation');
    expect(toolNames(request)).not.toContain('view_image');
  });

  it('shows the next request a picture the agent opened with view_image, after the tool result', async () => {
    const threadId = (await runtime.createThread()).thread_id;
    const chart = await sharp({ create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0.5 } } }).png().toBuffer();
    const path = await put(threadId, 'outputs', 'chart.png', chart);
    model.enqueue({ toolCalls: [{ name: 'view_image', args: { path } }] }, { text: 'The chart is half transparent.' });
    const { values } = await runtime.waitRun(threadId, ask('Look at the chart you made.', 'eyes'));
    expect(extractFinalText(values)).toBe('The chart is half transparent.');

    const second = model.requests[1] as FakeChatRequest;
    const [toolResult, picture] = second.messages.slice(-2);
    expect(toolResult?.role).toBe('tool');
    expect(toolResult?.content).toBe(`Showing ${path} (400×300 as you see it) in the next message.`);
    expect(picture?.role).toBe('user');
    const parts = partsOf(picture);
    expect(parts[0]?.text).toContain(path);
    // Transparency kept: PNG, not JPEG.
    expect(await sizeOf(parts[1]?.image_url?.url)).toEqual({ width: 400, height: 300, format: 'png' });
    const state = await runtime.getThread(threadId);
    expect(JSON.stringify(state.values)).not.toContain('base64');
  });

  it('refuses view_image on a file that is not a picture, or outside the sandbox, with a reason the model reads', async () => {
    const threadId = (await runtime.createThread()).thread_id;
    const notes = await put(threadId, 'outputs', 'notes.png', new TextEncoder().encode('not a picture at all'));
    model.enqueue(
      { toolCalls: [{ name: 'view_image', args: { path: notes } }] },
      { toolCalls: [{ name: 'view_image', args: { path: '/etc/passwd' } }] },
      { text: 'I could not open them.' },
    );
    await runtime.waitRun(threadId, ask('Look at these.', 'eyes'));
    const results = (model.requests[2] as FakeChatRequest).messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results[0]).toMatch(/^Error: '\/mnt\/user-data\/outputs\/notes\.png' is not a picture that can be shown/);
    expect(results[1]).toMatch(/^Error: path '\/etc\/passwd' is outside the sandbox/);
    // No picture message follows a failed view.
    expect((model.requests[2] as FakeChatRequest).messages.filter((m) => m.role === 'user')).toHaveLength(1);
    for (const result of results) expect(result).not.toContain(dataDir);
  });

  it('answers when a sent picture cannot be read, telling the model so', async () => {
    const threadId = (await runtime.createThread()).thread_id;
    const path = await put(threadId, 'uploads', 'broken.jpg', new Uint8Array([0xff, 0xd8, 0xff, 0x00, 0x01]));
    const { values } = await runtime.waitRun(threadId, ask('And this?', 'eyes', [{ filename: 'broken.jpg', size: 5, path, is_image: true }]));
    expect(extractFinalText(values)).toBe('A blue square.');
    const parts = partsOf((model.requests[0] as FakeChatRequest).messages.at(-1));
    expect(parts.map((part) => part.type)).toEqual(['text', 'text']);
    expect(parts[1]?.text).toMatch(/^\(The picture cannot be shown: '\/mnt\/user-data\/uploads\/broken\.jpg' is not a picture that can be shown/);
  });
});
