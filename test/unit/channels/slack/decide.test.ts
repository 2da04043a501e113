import { describe, expect, it } from 'vitest';
import { type DecideContext, decideEvent } from '../../../../channels/slack/decide.js';
import type { SlackMessageEvent } from '../../../../channels/slack/events.js';

const CONTEXT: DecideContext = {
  botUserId: 'UBOT',
  teamId: 'T1',
  allowedUsers: new Set(),
  commandNames: new Set(['new', 'help']),
  canBind: true,
};

function event(extra: Partial<SlackMessageEvent>): SlackMessageEvent {
  return { type: 'message', channel: 'C1', channel_type: 'channel', user: 'U1', text: 'hi', ts: '10.000100', ...extra };
}

describe('decideEvent', () => {
  it.each<[string, Partial<SlackMessageEvent>, string]>([
    ['our own message', { user: 'UBOT' }, 'self'],
    ['another bot', { bot_id: 'B2', subtype: 'bot_message' }, 'bot-sender'],
    ['an edit', { subtype: 'message_changed' }, 'subtype'],
    ['a join', { subtype: 'channel_join' }, 'subtype'],
    ['no sender', { user: undefined }, 'no-sender'],
    ['only our mention', { text: '<@UBOT>  ' }, 'empty'],
  ])('ignores %s', (_name, extra, reason) => {
    expect(decideEvent(event(extra), CONTEXT)).toEqual({ kind: 'ignore', reason });
  });

  it('forwards a top-level channel message as a new conversation keyed by its ts', () => {
    expect(decideEvent(event({ type: 'app_mention', text: '<@UBOT> /new now', channel_type: undefined }), CONTEXT)).toEqual({
      kind: 'forward',
      // Claimed by team, channel and ts: Slack's retries and the app_mention + message pair count once.
      deliveryKey: 'T1:C1:10.000100',
      message: expect.objectContaining({
        chatId: 'C1',
        topicId: '10.000100',
        messageId: '10.000100',
        workspaceId: 'T1',
        text: '/new now',
        kind: 'command',
        isPrivateChat: false,
        senderIsAllowlisted: false,
      }),
    });
  });

  it('continues a thread and recognises DMs', () => {
    const decision = decideEvent(event({ channel: 'D1', channel_type: 'im', thread_ts: '9.000001' }), CONTEXT);
    expect(decision).toMatchObject({ kind: 'forward', message: { topicId: '9.000001', isPrivateChat: true } });
  });

  it('binds before the allow-list, and drops senders outside it', () => {
    const listed = { ...CONTEXT, allowedUsers: new Set(['U9']) };
    expect(decideEvent(event({ text: '<@UBOT> /connect AbC' }), listed)).toEqual({
      kind: 'bind',
      deliveryKey: 'T1:C1:10.000100',
      answerTo: { chatId: 'C1', topicId: '10.000100', isPrivateChat: false, replyTo: { messageId: '10.000100' } },
      request: { identity: { externalAccountId: 'U1', workspaceId: 'T1' }, code: 'AbC', accountName: 'U1', metadata: { team_id: 'T1', channel_id: 'C1' } },
    });
    expect(decideEvent(event({ text: '/connect AbC' }), { ...listed, canBind: false })).toEqual({ kind: 'ignore', reason: 'not-allowed' });
    expect(decideEvent(event({ user: 'U9' }), listed)).toMatchObject({ kind: 'forward', message: { senderIsAllowlisted: true } });
  });

  it('hands the model the decoded text: entities, mentions by name, links, our leading mention gone', () => {
    // A real event's text for "@deerflow compare 1 < 2 && 3 > 2, ask @bob, see docs" with bob picked and a link added.
    const text = '<@UBOT> compare 1 &lt; 2 &amp;&amp; 3 &gt; 2, ask <@U2BOB> or <@UBOT>, see <https://x.dev/a?b=1&amp;c=2|the docs>';
    const decision = decideEvent(event({ type: 'app_mention', text }), { ...CONTEXT, botName: 'deerflow', userNames: new Map([['U2BOB', 'bob']]) });
    expect(decision).toMatchObject({ kind: 'forward', message: { text: 'compare 1 < 2 && 3 > 2, ask @bob or @deerflow, see the docs (https://x.dev/a?b=1&c=2)', kind: 'chat' } });
  });

  it('reads a command behind encoded text as a command', () => {
    expect(decideEvent(event({ text: '<@UBOT> /new &lt;fresh&gt;' }), CONTEXT)).toMatchObject({ kind: 'forward', message: { text: '/new <fresh>', kind: 'command' } });
  });

  it('takes a file share without text', () => {
    const decision = decideEvent(
      event({ subtype: 'file_share', text: '', files: [{ id: 'F1', name: 'a.png', mimetype: 'image/png', size: 3, url_private_download: 'https://files.slack.com/a' }] }),
      CONTEXT,
    );
    expect(decision).toMatchObject({
      kind: 'forward',
      message: { files: [{ name: 'a.png', mimeType: 'image/png', isImage: true, declaredSize: 3, ref: 'https://files.slack.com/a' }] },
    });
  });
});
