import { describe, expect, it } from 'vitest';
import { decodeInboundText, stripLeadingMention, unlabelledChannels, unlabelledMentions } from '../../../../channels/slack/inbound-text.js';

const CONTEXT = { botUserId: 'UBOT', botName: 'deerflow', userNames: new Map([['U2BOB', 'bob']]), channelNames: new Map([['C456', 'random']]) };

/** Event `text` as Slack sends it (https://docs.slack.dev/messaging/formatting-message-text) → what the model reads. */
describe('decodeInboundText', () => {
  it.each<[string, string, string]>([
    ['the issue example', 'compare 1 &lt; 2 &amp;&amp; 3 &gt; 2', 'compare 1 < 2 && 3 > 2'],
    ['entities typed literally, decoded once', 'Tom &amp;amp; Jerry &amp;lt;3 &amp;#39;x&amp;#39; &amp;nbsp;', 'Tom &amp; Jerry &lt;3 &#39;x&#39; &nbsp;'],
    ['only the three entities', '&quot;kept&quot; &#39;kept&#39;', '&quot;kept&quot; &#39;kept&#39;'],
    ['HTML-like text', '&lt;b&gt;not bold&lt;/b&gt; &lt;br/&gt;', '<b>not bold</b> <br/>'],
    ['our leading mention removed', '<@UBOT>: hi there', 'hi there'],
    ['our labelled leading mention removed', '  <@UBOT|deerflow>, hi', 'hi'],
    ['our mention elsewhere by name', 'ask <@UBOT> please', 'ask @deerflow please'],
    ['a labelled mention', '<@U9|alice> hi', '@alice hi'],
    ['a mention by id, looked up', 'ping <@U2BOB>', 'ping @bob'],
    ['a mention nobody could name', 'ping <@U404>', 'ping @U404'],
    ['channels, labelled, looked up, or neither', '<#C123|general>, <#C456>, <#C456|> and <#C789>', '#general, #random, #random and #C789'],
    ['special mentions', '<!here> <!channel> <!everyone>', '@here @channel @everyone'],
    ['a user group and a date', '<!subteam^SAZ94GDB8|@oncall> at <!date^1392734382^{date_short}|Feb 18, 2014>', '@oncall at Feb 18, 2014'],
    ['a labelled link', 'read <https://x.dev/a_b?x=1&amp;y=2|the docs> first', 'read the docs (https://x.dev/a_b?x=1&y=2) first'],
    ['a bare link', 'see <https://x.dev/?a=1&amp;b=2>.', 'see https://x.dev/?a=1&b=2.'],
    ['a link Slack made of a typed domain', 'go to <http://example.com|example.com>', 'go to example.com'],
    ['an email address', 'mail <mailto:a@b.dev|a@b.dev> or <mailto:c@d.dev|Carol>', 'mail a@b.dev or Carol (c@d.dev)'],
    ['a link inside Markdown the person typed', 'read [the docs](<https://x.dev/a?b=1&amp;c=2>) first', 'read [the docs](https://x.dev/a?b=1&c=2) first'],
    ['markup characters stay', 'snake_case *not* ~x~ `y` | z', 'snake_case *not* ~x~ `y` | z'],
  ])('%s', (_name, text, read) => {
    expect(decodeInboundText(text, CONTEXT)).toBe(read);
  });

  it('shows our mention by id without a name', () => {
    expect(decodeInboundText('hi <@UBOT>', { botUserId: 'UBOT' })).toBe('hi @UBOT');
  });
});

describe('unlabelledMentions and unlabelledChannels', () => {
  it('list the ids referenced without a name, once each, not our bot', () => {
    const text = '<@UBOT> <@U1> <@W2> <@U1> <@U3|carol> <#C1> <#C2|> <#C3|general> <#C1>';
    expect([unlabelledMentions(text, 'UBOT'), unlabelledChannels(text)]).toEqual([
      ['U1', 'W2'],
      ['C1', 'C2'],
    ]);
  });
});

describe('stripLeadingMention', () => {
  it.each<[string, string]>([
    ['<@UBOT> hi', 'hi'],
    ['<@UBOT|deerflow>: hi', 'hi'],
    ['  <@UBOT>\nhi', 'hi'],
    ['<@UOTHER> hi', '<@UOTHER> hi'],
    ['hi <@UBOT>', 'hi <@UBOT>'],
  ])('%j → %j', (text, expected) => {
    expect(stripLeadingMention(text, 'UBOT')).toBe(expected);
  });
});
