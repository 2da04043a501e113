import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, startDiscordChannel } from '../../fakes/discord/harness.js';
import { CapturedLogs, MALFORMED_EVENT_WARNING } from './malformed-events.js';

/**
 * MESSAGE_CREATE dispatches of the wrong shape sent down the fake gateway to the real discord.js
 * client: each is dropped with one warning naming only paths; no error line, no crash, and the
 * next genuine message is answered.
 */

const SECRET_TEXT = 'do-not-log-this-text';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Payload = Record<string, unknown>;

const MALFORMED: Array<[string, (payload: Payload) => Payload]> = [
  ['author missing', ({ author: _author, ...rest }) => rest],
  ['author null', (p) => ({ ...p, author: null })],
  ['author.id a number', (p) => ({ ...p, author: { ...(p.author as Payload), id: 7 } })],
  ['author.bot a string', (p) => ({ ...p, author: { ...(p.author as Payload), bot: 'no' } })],
  ['content a number', (p) => ({ ...p, content: 42 })],
  ['content an object', (p) => ({ ...p, content: { text: SECRET_TEXT } })],
  ['id a number', (p) => ({ ...p, id: 5 })],
  ['attachments a string', (p) => ({ ...p, attachments: SECRET_TEXT })],
  ['message_reference a string', (p) => ({ ...p, message_reference: SECRET_TEXT })],
];

describe('Discord malformed gateway messages', () => {
  it('drops each with one warning, logs no error, and answers the next genuine message', async () => {
    const logs = new CapturedLogs();
    const { fake, intake } = await startDiscordChannel(cleanups, { deps: { logger: logs.logger } });
    // A genuine payload of the fake's, reused as the template of the broken ones.
    fake.sendUserMessage({ author: ALICE, content: 'first' });
    await intake.waitForCommits(1);
    const template = fake.gateway.lastDispatch('MESSAGE_CREATE') as Payload;
    for (const [index, [, breakIt]] of MALFORMED.entries()) {
      fake.gateway.dispatch('MESSAGE_CREATE', breakIt({ ...template, id: `80000000000000${String(index).padStart(4, '0')}`, content: `${SECRET_TEXT} ${index}` }));
    }
    await logs.waitForWarnings(MALFORMED_EVENT_WARNING, MALFORMED.length);
    const sent = fake.sendUserMessage({ author: ALICE, content: 'genuine hello' });
    const commits = await intake.waitForCommits(2);
    expect(commits[1]).toMatchObject({ messageId: sent.id, text: 'genuine hello' });
    const warnings = logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING);
    expect(warnings).toHaveLength(MALFORMED.length);
    expect(warnings.every((line) => line.platform === 'discord' && Array.isArray(line.issues))).toBe(true);
    expect(logs.errors()).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_TEXT);
  });
});
