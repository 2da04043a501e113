/**
 * Every channel's conversations (`/console/conversations`), from `GET /api/conversations`: the
 * operator sees all of them, a person their own. **Open** shows a conversation's transcript below
 * the list (`GET /api/conversations/:thread_id/transcript`); **Older** reads the next page back,
 * **Newest** returns to the first.
 */
import { api, button, element, formatTime, pageSize, say, startPage, table } from '/console/shared.js';

/** Rows per page: 25, or `?per_page=` of the page's address (1 to 200). */
const PAGE_SIZE = pageSize(25);

const TEXT = {
  none: 'No conversations yet. They appear here once someone writes to the bot.',
  noOlder: 'There are no older conversations.',
  emptyTranscript: 'Nothing has been said in this conversation yet.',
  roles: { user: 'Person', assistant: 'Agent', tool: 'Tool call' },
};

/** Where the conversation is: the chat's title where known, else its id (and topic). */
function chatOf(conversation) {
  const place = conversation.title ?? conversation.chat_id;
  return conversation.topic_id === null ? place : `${place} (topic ${conversation.topic_id})`;
}

function threadCell(threadId) {
  return element('code', { text: threadId, className: 'thread-id' });
}

async function showTranscript(section, conversation) {
  const answer = await api(`/api/conversations/${encodeURIComponent(conversation.thread_id)}/transcript`);
  const heading = element('h3', { text: `Transcript: ${conversation.platform} ${chatOf(conversation)}` });
  heading.tabIndex = -1;
  // A thread's stored messages carry no times today; the column shows only when some do.
  const timed = answer.messages.some((message) => message.at);
  const body =
    answer.messages.length === 0
      ? element('p', { text: TEXT.emptyTranscript })
      : table('Messages, oldest first', ['Role', 'Text', ...(timed ? ['Time'] : [])], answer.messages, (message) => [
          TEXT.roles[message.role] ?? message.role,
          element('span', { text: message.text, className: 'message-text' }),
          ...(timed ? [formatTime(message.at)] : []),
        ]);
  section.replaceChildren(heading, body);
  section.hidden = false;
  heading.focus();
  say(`Showing the transcript of thread ${conversation.thread_id}.`);
}

startPage({
  path: '/console/conversations',
  async render(container) {
    const list = element('div', { className: 'conversation-list' });
    const pager = element('p', { className: 'pager' });
    const transcript = element('section', { className: 'transcript' });
    transcript.setAttribute('aria-label', 'Transcript');
    transcript.hidden = true;
    container.append(list, pager, transcript);

    const load = async (before) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (before !== undefined) query.set('before', before);
      const answer = await api(`/api/conversations?${query}`);
      if (answer.conversations.length === 0) {
        list.replaceChildren(element('p', { text: before === undefined ? TEXT.none : TEXT.noOlder }));
      } else {
        list.replaceChildren(
          table('Conversations, newest activity first', ['Platform', 'Chat', 'Person', 'Thread', 'Last activity', 'Transcript'], answer.conversations, (c) => [
            c.platform,
            chatOf(c),
            c.person ?? '',
            threadCell(c.thread_id),
            formatTime(c.last_activity_at),
            button('Open', () => showTranscript(transcript, c), { label: `Open conversation ${c.thread_id}` }),
          ]),
        );
      }
      const controls = [];
      if (before !== undefined) controls.push(button('Newest', () => load(undefined)));
      if (answer.next_before !== null) controls.push(button('Older', () => load(answer.next_before)));
      pager.replaceChildren(...controls);
    };
    await load(undefined);
  },
});
