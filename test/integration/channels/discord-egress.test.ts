import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channel/types.js';
import { ChannelError } from '../../../src/errors.js';
import { ALICE, gaps, startDiscordChannel, targetOf } from '../../fakes/discord/harness.js';

/**
 * Replies, files and the gateway's faults with the real discord.js adapter against FakeDiscord:
 * edit cadence, splitting, the one-hour edit cutoff, 429s with bucket headers, a dropped socket
 * and an invalid session in the middle of a reply.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dmQuestion(options: Parameters<typeof startDiscordChannel>[1] = {}) {
  const started = await startDiscordChannel(cleanups, options);
  started.fake.sendUserMessage({ author: ALICE, content: 'a question' });
  const [inbound] = (await started.intake.waitForCommits(1)) as [InboundMessage];
  return { ...started, inbound, chatId: inbound.chatId, reply: started.adapter.egress.reply(targetOf(inbound)) };
}

describe('Discord egress', () => {
  it('streams into one message replying to the question, edits at least 1.2 s apart, then the final', async () => {
    const { fake, chatId, inbound, reply } = await dmQuestion();
    const texts = ['a', 'ab', 'abc', 'abcd', 'abcde'];
    reply.update(texts[0] as string);
    // Each update is given once the previous one shows, so every one is a separate request.
    for (const [i, text] of texts.slice(1).entries()) {
      await fake.waitFor(() => (fake.botMessages(chatId)[0]?.history.length ?? 0) > i, 5000);
      reply.update(text);
    }
    await fake.waitFor(() => fake.botMessages(chatId)[0]?.content === 'abcde', 5000);
    await reply.finish('final');
    const [message, ...others] = fake.botMessages(chatId);
    expect(others).toEqual([]);
    expect(message?.replyTo).toBe(inbound.messageId);
    expect(message?.content).toBe('final');
    const partialTimes = [message?.sentAt ?? 0, ...(message?.editedAt ?? [])].slice(0, -1);
    expect(gaps(partialTimes).filter((gap) => gap < 1200)).toEqual([]);
    expect(fake.rateLimitViolations).toEqual([]);
  });

  it('splits a long final at 2000 characters on newlines, each part replying to the one before', async () => {
    const { fake, chatId, inbound, reply } = await dmQuestion();
    const line = `${'word '.repeat(59)}end`; // 298 characters
    const text = `${line}\n`.repeat(20);
    await reply.finish(text);
    const messages = fake.botMessages(chatId);
    // Each message shows whole lines; a message's end is a line's end.
    expect(messages.map((m) => fake.display(m).shown).join('\n')).toBe(text.trimEnd());
    expect(messages.every((m) => m.content.length <= 2000)).toBe(true);
    expect(messages.length).toBe(4);
    expect(messages.map((m) => m.replyTo)).toEqual([inbound.messageId, ...messages.slice(0, -1).map((m) => m.id)]);
  });

  it('cuts a code block too long for one message into blocks that each show on their own', async () => {
    const { fake, chatId, reply } = await dmQuestion();
    const lines = Array.from({ length: 300 }, (_, i) => `print(${i})  # a_b * c | d`);
    await reply.finish(`intro\n\n\`\`\`py\n${lines.join('\n')}\n\`\`\`\n\nbye`);
    const messages = fake.botMessages(chatId);
    expect(messages.length).toBeGreaterThan(2);
    expect(messages.filter((m) => m.content.length > 2000)).toEqual([]);
    // Every message closes the fence it opens; no line is lost, doubled or escaped.
    expect(messages.filter((m) => (m.content.match(/```/g) ?? []).length % 2 !== 0)).toEqual([]);
    const shownLines = messages.flatMap((m) => fake.display(m).shown.split('\n')).filter((line) => line !== '');
    expect(shownLines).toEqual(['intro', ...lines, 'bye']);
  });

  it('streams a partial longer than a message as its first part and an ellipsis, never half a fence', async () => {
    const { fake, chatId, reply } = await dmQuestion();
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}`);
    reply.update(`\`\`\`\n${lines.join('\n')}`);
    const [message] = await fake.waitFor(() => fake.botMessages(chatId).length === 1 && fake.botMessages(chatId));
    expect(message?.content.length).toBeLessThanOrEqual(2000);
    expect(message?.content).toMatch(/^```\nline 0\n[\s\S]*\n```…$/);
    await reply.finish('done');
  });

  it('stops editing a message older than an hour and continues in a new one', async () => {
    let offsetMs = 0;
    const { fake, chatId, reply } = await dmQuestion({ deps: { now: () => Date.now() + offsetMs } });
    reply.update('written an hour ago');
    const [old] = await fake.waitFor(() => fake.botMessages(chatId).length === 1 && fake.botMessages(chatId));
    offsetMs = 61 * 60 * 1000;
    reply.update('still writing');
    await reply.finish('the final');
    const [first, second, ...rest] = fake.botMessages(chatId);
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ id: old?.id, history: ['written an hour ago'] });
    expect(second?.content).toBe('the final');
    expect(fake.callsTo('edit')).toEqual([]);
  });

  it('waits out a 429 with bucket headers on the final edit (discord.js reads retry-after) and delivers', async () => {
    const { fake, chatId, reply } = await dmQuestion();
    reply.update('partial');
    await fake.waitFor(() => fake.botMessages(chatId).length === 1);
    fake.failNext('edit', { status: 429, retryAfterMs: 1500 });
    await reply.finish('final after the limit');
    const [limited] = fake.calls.filter((c) => c.status === 429);
    const [message] = fake.botMessages(chatId);
    expect(message?.content).toBe('final after the limit');
    expect((message?.editedAt[0] ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1500);
    expect(fake.rateLimitViolations).toEqual([]);
  });

  it('tries a final again after Discord stops answering (5xx past discord.js retries), posting it once', async () => {
    const { fake, chatId, reply } = await dmQuestion();
    // discord.js tries 1 + 3 times at once; each try reaches Discord, only the answers are lost.
    fake.failNext('send', { status: 502, code: 0, message: 'Bad Gateway', isApplied: true }, 4);
    await reply.finish('delivered once');
    const sends = fake.callsTo('send');
    expect(sends.map((c) => c.status)).toEqual([502, 502, 502, 502, 200]);
    expect(new Set(sends.map((c) => (c.body as { nonce?: string }).nonce)).size).toBe(1);
    expect(fake.botMessages(chatId).map((m) => m.content)).toEqual(['delivered once']);
  });

  it('gives up on a final after three rounds of unanswered tries, with CHANNEL_UNAVAILABLE', async () => {
    const { fake, reply } = await dmQuestion();
    fake.failNext('send', { status: 503, code: 0, message: 'Service Unavailable' }, 12);
    await expect(reply.finish('lost')).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE', platform: 'discord' });
    expect(fake.callsTo('send')).toHaveLength(12);
  });

  it('after a part is refused, leaves the Markdown of the parts not shown, to continue after the last one shown', async () => {
    const { fake, chatId, inbound, reply, adapter } = await dmQuestion();
    reply.update('thinking');
    const [streamed] = await fake.waitFor(() => fake.botMessages(chatId).length === 1 && fake.botMessages(chatId));
    fake.failNext('send', { status: 403, code: 50013, message: 'Missing Permissions' });
    const lines = Array.from({ length: 300 }, (_, i) => `step ${i}: **done**`);
    await expect(reply.finish(lines.join('\n'))).rejects.toBeInstanceOf(ChannelError);
    const left = reply.finalLeft?.();
    expect(left?.anchor).toEqual({ messageId: streamed?.id });
    await adapter.egress.reply({ ...targetOf(inbound), replyTo: left?.anchor ?? {} }).finish(left?.text ?? '');
    const messages = fake.botMessages(chatId);
    expect(messages[0]?.id).toBe(streamed?.id);
    expect(messages.slice(1).map((m) => m.replyTo)).toEqual(messages.slice(0, -1).map((m) => m.id));
    expect(messages.flatMap((m) => fake.display(m).shown.split('\n'))).toEqual(lines.map((line) => line.replace('**done**', 'done')));
  });

  it('rejects finish() with a ChannelError when Discord refuses the message', async () => {
    const { fake, reply } = await dmQuestion();
    fake.failNext('send', { status: 403, code: 50007, message: 'Cannot send messages to this user' });
    const error = await reply.finish('nobody hears this').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ code: 'CHANNEL_REJECTED', platform: 'discord' });
    expect((error as Error).message).not.toContain('nobody hears this');
  });

  it('uploads a file as an attachment replying to the question, and refuses one over 10 MiB without a request', async () => {
    const { fake, adapter, inbound, chatId } = await dmQuestion();
    const dir = await mkdtemp(join(tmpdir(), 'discord-files-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const hostPath = join(dir, 'report.txt');
    await writeFile(hostPath, 'the report');
    await adapter.files?.send(targetOf(inbound), { hostPath, name: 'report.txt', mimeType: 'text/plain', isImage: false, size: 10 });
    expect(fake.uploads.map((u) => [u.channelId, u.filename, Buffer.from(u.bytes).toString()])).toEqual([[chatId, 'report.txt', 'the report']]);
    expect(fake.botMessages(chatId)[0]?.replyTo).toBe(inbound.messageId);
    const tooBig = adapter.files?.send(targetOf(inbound), { hostPath, name: 'big.bin', mimeType: 'application/octet-stream', isImage: false, size: 11 * 1024 * 1024 });
    await expect(tooBig).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(fake.uploads).toHaveLength(1);
  });

  it('downloads an attachment again from a fresh URL when the signed one has expired', async () => {
    const { fake, adapter, intake } = await startDiscordChannel(cleanups);
    const bytes = new Uint8Array([1, 2, 3, 4]);
    fake.sendUserMessage({ author: ALICE, content: 'see file', attachments: [{ filename: 'a.bin', bytes }] });
    const [inbound] = await intake.waitForCommits(1);
    const file = inbound?.files?.[0];
    const ref = JSON.parse(file?.ref ?? '{}') as { url: string };
    const expired = { ...file, ref: JSON.stringify({ ...ref, url: ref.url.replace(/\/attachments\/(\d+)\/\d+\//, '/attachments/$1/1/') }) };
    expect(await adapter.files?.download(expired as never)).toEqual(bytes);
    expect(fake.downloads.map((d) => d.status)).toEqual([404, 200]);
    expect(fake.callsTo('get-message')).toHaveLength(1);
  });

  it('refuses an attachment over the download limit by its declared size', async () => {
    const { adapter } = await startDiscordChannel(cleanups);
    const file = { name: 'huge.bin', mimeType: 'application/octet-stream', isImage: false, declaredSize: 30 * 1024 * 1024, ref: '{}' };
    await expect(adapter.files?.download(file)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE', userMessage: 'exceeds the 25 MB download limit' });
  });
});

describe('Discord gateway faults', () => {
  it('resumes after a dropped socket mid-reply: the reply completes and messages sent meanwhile arrive', async () => {
    const { fake, chatId, reply, intake } = await dmQuestion();
    reply.update('before the drop');
    await fake.waitFor(() => fake.botMessages(chatId).length === 1);
    fake.gateway.dropSocket();
    const during = fake.sendUserMessage({ author: ALICE, content: 'sent while the socket was down' });
    reply.update('during the drop');
    await reply.finish('final after the drop');
    await fake.waitFor(() => fake.gateway.events.some((e) => e.kind === 'resumed'), 10_000);
    const [, replayed] = await intake.waitForCommits(2);
    expect(replayed?.messageId).toBe(during.id);
    expect(fake.botMessages(chatId).map((m) => m.content)).toEqual(['final after the drop']);
    expect(fake.gateway.events.filter((e) => e.kind === 'identify')).toHaveLength(1);
  });

  it('delivers the final while discord.js re-identifies after an invalid session, and keeps receiving after', async () => {
    const { fake, chatId, reply, intake, adapter } = await dmQuestion();
    reply.update('before');
    await fake.waitFor(() => fake.botMessages(chatId).length === 1);
    fake.gateway.invalidateSession();
    await reply.finish('final during re-identify');
    expect(fake.botMessages(chatId).map((m) => m.content)).toEqual(['final during re-identify']);
    await fake.waitFor(() => fake.gateway.events.filter((e) => e.kind === 'identify').length === 2 && fake.gateway.isConnected, 15_000);
    const after = fake.sendUserMessage({ author: ALICE, content: 'after the new session' });
    const [, inbound] = await intake.waitForCommits(2);
    expect(inbound?.messageId).toBe(after.id);
    expect(adapter.status().running).toBe(true);
  }, 20_000);
});
