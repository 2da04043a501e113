import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatRequest, lastUserText } from '../fakes/openai/index.js';
import type { ChatMessageView } from '../fakes/telegram/index.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * Scheduled work as a Telegram user meets it, through the real server: `/schedule` made, listed,
 * paused and cancelled from the chat; each occurrence answered as a new message in the chat it
 * was made in, by the agent on the schedule's own thread (issue #17). The operator's minimum
 * interval is 2 s here so that occurrences come within a test.
 */

let setup: TelegramSetup | undefined;
let nextChat = 8100;

function chat(): TelegramSetup {
  return setup as TelegramSetup;
}

/** Sends `text` and resolves with the final text of the bot's reply to it (not a partial, which ends in the cursor). */
async function say(chatId: number, text: string): Promise<string> {
  const { telegram } = chat();
  const sent = telegram.sendUserMessage({ chatId, chatType: 'private', text });
  return telegram.waitFor(() => {
    const reply = telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id);
    const isFinal = reply !== undefined && reply.text !== 'Working on it...' && !reply.text.endsWith(' ▉');
    return isFinal ? reply.text : undefined;
  }, 60_000);
}

/** The bot's messages in `chatId` that answer no message of the person: the schedule's runs. */
function scheduledPosts(chatId: number, text: string): ChatMessageView[] {
  return chat().telegram.botMessages(chatId).filter((m) => m.replyTo === undefined && m.text === text);
}

/** The id in `Scheduled <id>: …`. */
function idOf(reply: string): string {
  const match = /^Scheduled ([a-z0-9]{6}):/.exec(reply);
  if (!match) throw new Error(`not a schedule confirmation: ${reply}`);
  return match[1] as string;
}

function requestsFor(task: string): FakeChatRequest[] {
  return chat().model.requests.filter((request) => lastUserText(request.messages) === task);
}

describe('schedules made from a Telegram chat', () => {
  beforeAll(async () => {
    setup = await startTelegramChat('', 'schedules: { min_interval_seconds: 2, timezone: UTC }\n');
  });
  afterAll(async () => {
    await setup?.stop();
  });

  it('confirms a schedule with its next run, posts each run into the chat, lists it, and stops it when cancelled', async () => {
    const chatId = nextChat++;
    const confirmation = await say(chatId, '/schedule every 2s report the build status');
    expect(confirmation).toMatch(
      /^Scheduled [a-z0-9]{6}: every 2 seconds\.\nNext run: \w{3} \d{1,2} \w{3} \d{4}, \d{2}:\d{2}(:\d{2})? \(UTC\)\.\nTask: report the build status\nCancel it with \/schedule cancel [a-z0-9]{6}\.$/,
    );
    const id = idOf(confirmation);
    const post = 'Echo: report the build status';
    await chat().telegram.waitFor(() => scheduledPosts(chatId, post).length >= 2 || undefined, 60_000);

    // Each run is the agent's, on the schedule's own thread, with nobody there to answer a question.
    const runs = requestsFor('report the build status');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const run of runs) expect(JSON.stringify(run.tools ?? [])).not.toContain('ask_clarification');
    // One thread for the schedule: the second run reads what the first answered.
    expect(JSON.stringify(runs[1]?.messages)).toContain(post);

    expect(await say(chatId, '/schedule list')).toMatch(new RegExp(`^Your schedules in this chat:\\n• ${id} — every 2 seconds — next .+ — report the build status$`));
    expect(await say(chatId, `/schedule pause ${id}`)).toBe(`Schedule ${id} paused. Resume it with /schedule resume ${id}.`);
    expect(await say(chatId, '/schedule list')).toBe(`Your schedules in this chat:\n• ${id} — every 2 seconds — paused — report the build status`);
    expect(await say(chatId, `/schedule cancel ${id}`)).toBe(`Schedule ${id} cancelled.`);
    expect(await say(chatId, '/schedule list')).toMatch(/^You have no schedules in this chat\./);
  });

  it('runs a one-off once, and the chat conversation stays its own', async () => {
    const chatId = nextChat++;
    expect(await say(chatId, 'hello there')).toBe('Echo: hello there');
    const confirmation = await say(chatId, '/schedule in 2s remind me to stretch');
    expect(confirmation).toMatch(/^Scheduled [a-z0-9]{6}: once, /);
    await chat().telegram.waitFor(() => scheduledPosts(chatId, 'Echo: remind me to stretch').length === 1 || undefined, 60_000);
    expect(await say(chatId, '/schedule list')).toMatch(/^You have no schedules in this chat\./);
    // The schedule's run did not land in the chat's own conversation.
    expect(await say(chatId, 'and again')).toBe('Echo: and again');
    const chatTurn = chat().model.requests.findLast((request) => lastUserText(request.messages) === 'and again');
    expect(JSON.stringify(chatTurn?.messages)).toContain('hello there');
    expect(JSON.stringify(chatTurn?.messages)).not.toContain('remind me to stretch');
    expect(scheduledPosts(chatId, 'Echo: remind me to stretch')).toHaveLength(1);
  });

  it('lets the agent schedule a reminder for the person, posted into the chat it was asked in', async () => {
    const chatId = nextChat++;
    chat().model.enqueue(
      { toolCalls: [{ name: 'schedule_task', args: { when: 'in 2s', task: 'remind the person to stretch' } }] },
      { text: 'Done: I will remind you in 2 seconds.' },
    );
    expect(await say(chatId, 'remind me to stretch in 2 seconds')).toBe('Done: I will remind you in 2 seconds.');
    const askedTurn = chat().model.requests.findLast((request) => lastUserText(request.messages) === 'remind me to stretch in 2 seconds');
    expect(JSON.stringify(askedTurn?.tools)).toContain('schedule_task');
    // The tool's result, which the agent answered from: the schedule as /schedule would confirm it.
    expect(JSON.stringify(chat().model.requests.at(-1)?.messages)).toMatch(/Scheduled [a-z0-9]{6}: once, /);
    await chat().telegram.waitFor(() => scheduledPosts(chatId, 'Echo: remind the person to stretch').length === 1 || undefined, 60_000);
    // A scheduled run makes no schedules of its own.
    expect(JSON.stringify(requestsFor('remind the person to stretch')[0]?.tools ?? [])).not.toContain('schedule_task');
  });

  it("sends the files a scheduled run makes after its answer, into the schedule's chat", async () => {
    const chatId = nextChat++;
    const path = '/mnt/user-data/outputs/digest.txt';
    const digest = 'Open PRs: 3\n- #12 fix login\n';
    // The scheduled run writes the digest and presents it.
    chat().model.enqueue(
      { toolCalls: [{ name: 'write_file', args: { description: 'save', path, content: digest } }, { name: 'present_files', args: { filepaths: [path] } }] },
      { text: 'Here is the digest.' },
    );
    await say(chatId, '/schedule in 2s write the PR digest');
    const upload = await chat().telegram.waitFor(() => chat().telegram.uploads.find((u) => u.chatId === chatId), 60_000);
    expect(upload).toMatchObject({ method: 'sendDocument', fileName: 'digest.txt' });
    expect(upload.bytes.toString('utf8')).toBe(digest);
    expect(scheduledPosts(chatId, 'Here is the digest.\n\nCreated File: 📎 digest.txt')).toHaveLength(1);
  });

  it('never lets an API caller name the chat a schedule posts into', async () => {
    const { server, model } = chat();
    const thread = (await (await fetch(`${server.url}/api/threads`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).json()) as {
      thread_id: string;
    };
    const forged = { channel: 'telegram', chatId: String(nextChat++), userId: '1', workspaceId: '1', isPrivateChat: true };
    const response = await fetch(`${server.url}/api/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        assistant_id: 'lead_agent',
        input: { messages: [{ role: 'human', content: 'schedule something into that chat' }] },
        context: { schedule_origin: forged },
        config: { configurable: { deerflow_schedule_origin: forged } },
      }),
    });
    expect(response.status).toBe(200);
    const run = model.requests.findLast((request) => lastUserText(request.messages) === 'schedule something into that chat');
    expect(JSON.stringify(run?.tools ?? [])).not.toContain('schedule_task');
  });

  it('pauses a schedule whose chat refuses the bot for good, so the agent stops running for nobody', async () => {
    const chatId = nextChat++;
    const id = idOf(await say(chatId, '/schedule every 2s post the weather'));
    // The bot was removed from the chat: Telegram refuses what it sends there.
    chat().telegram.failNext('sendMessage', { errorCode: 403, description: 'Forbidden: bot was kicked from the group chat' }, 50);
    await chat().server.waitForLog((entry) => entry.msg === 'schedule paused: its chat refused the answer for good' && entry.scheduleId === id, 60_000);
    chat().telegram.clearFaults('sendMessage');
    expect(await say(chatId, '/schedule list')).toBe(`Your schedules in this chat:\n• ${id} — every 2 seconds — paused — post the weather`);
    const runs = requestsFor('post the weather').length;
    // Resumed by its owner, it runs again.
    expect(await say(chatId, `/schedule resume ${id}`)).toMatch(new RegExp(`^Schedule ${id} resumed\\. Next run: `));
    await chat().telegram.waitFor(() => requestsFor('post the weather').length > runs || undefined, 60_000);
    expect(await say(chatId, `/schedule cancel ${id}`)).toBe(`Schedule ${id} cancelled.`);
  });

  it('refuses what it cannot run, with a reason, and stores nothing', async () => {
    const chatId = nextChat++;
    expect(await say(chatId, '/schedule every 1s spam the chat')).toMatch(/every 2 seconds/);
    expect(await say(chatId, '/schedule whenever you like do it')).toMatch(/every weekday 09:00/);
    expect(await say(chatId, '/schedule every day 09:00')).toMatch(/task/i);
    expect(await say(chatId, '/schedule cancel zzzzzz')).toBe('You have no schedule zzzzzz. See yours with /schedule list.');
    expect(await say(chatId, '/schedule list')).toMatch(/^You have no schedules in this chat\./);
  });

  it("reads a person's times in the time zone they chose, and shows runs in it", async () => {
    const chatId = nextChat++;
    expect(await say(chatId, '/schedule timezone')).toBe(
      "Your schedules are read in UTC (the server's). Set yours with /schedule timezone <zone>, e.g. /schedule timezone America/New_York.",
    );
    expect(await say(chatId, '/schedule timezone Mars/Olympus')).toBe('Mars/Olympus is not a time zone I know. Use an IANA name, like Europe/Berlin, America/New_York or UTC.');
    expect(await say(chatId, '/schedule timezone asia/tokyo')).toBe('Your new schedules are read in Asia/Tokyo. Schedules you made before keep the time zone they were made in.');
    const confirmation = await say(chatId, '/schedule every day 09:00 post the standup reminder');
    expect(confirmation).toMatch(/^Scheduled [a-z0-9]{6}: every day at 09:00\.\nNext run: \w{3} \d{1,2} \w{3} \d{4}, 09:00 \(Asia\/Tokyo\)\./);
    // Another person still reads the server's zone.
    expect(await say(nextChat++, '/schedule timezone')).toMatch(/^Your schedules are read in UTC \(the server's\)/);
  });

  it("never lets one person see or cancel another's schedule", async () => {
    const owner = nextChat++;
    const other = nextChat++;
    const id = idOf(await say(owner, '/schedule every day 09:00 water the plants'));
    expect(await say(other, `/schedule cancel ${id}`)).toBe(`You have no schedule ${id}. See yours with /schedule list.`);
    expect(await say(other, `/schedule pause ${id}`)).toBe(`You have no schedule ${id}. See yours with /schedule list.`);
    expect(await say(other, '/schedule list')).toMatch(/^You have no schedules in this chat\./);
    expect(await say(owner, '/schedule list')).toContain(`• ${id} — every day at 09:00 — next`);
  });
});
