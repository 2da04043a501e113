/**
 * What the server remembers about the signed-in person (`/console/memory`), from `GET /api/memory`:
 * each fact with its category and since when, a Delete per fact (`DELETE /api/memory/facts/:id`),
 * and Forget everything (`DELETE /api/memory`), which asks for a second press first. The operator,
 * who has no memory of their own, first picks a user; every call then names them with `?user_id=`.
 */
import { api, button, confirmingButton, element, formatTime, report, say, startPage, table } from '/console/shared.js';

const TEXT = {
  empty: 'Nothing is remembered about you yet. Facts appear here as the agent learns them from your chats.',
  emptyFor: (name) => `Nothing is remembered about ${name} yet.`,
  caption: 'What the agent remembers about you',
  captionFor: (name) => `What the agent remembers about ${name}`,
  pickUser: 'User',
  choose: 'Choose a user…',
  noUsers: 'There are no users yet. Create one on the Users page.',
  deleted: 'Deleted the fact.',
  forget: 'Forget everything',
  confirmForget: 'Press again to forget everything',
  forgot: (count) => `Forgot everything (${count} ${count === 1 ? 'fact' : 'facts'}).`,
  nothingToForget: 'There was nothing to forget.',
};

/** The first few words of a fact, to tell its Delete button from the others. */
function firstWords(text, count = 5) {
  const words = text.trim().split(/\s+/);
  return words.length > count ? `${words.slice(0, count).join(' ')}…` : words.join(' ');
}

/**
 * Draws the facts of `subject` (null: the signed-in person) below `before` (the heading, and the
 * operator's picker), calling the API for them.
 */
async function render(container, before, subject) {
  const query = subject === null ? '' : `?${new URLSearchParams({ user_id: subject.id })}`;
  const memory = await api(`/api/memory${query}`);
  if (memory.facts.length === 0) {
    container.replaceChildren(...before, element('p', { text: subject === null ? TEXT.empty : TEXT.emptyFor(subject.name), className: 'empty' }));
    return;
  }
  const caption = subject === null ? TEXT.caption : TEXT.captionFor(subject.name);
  const facts = table(caption, ['Fact', 'Category', 'Since', ''], memory.facts, (fact) => [
    fact.content,
    fact.category,
    formatTime(fact.created_at),
    button(
      'Delete',
      async () => {
        await api(`/api/memory/facts/${encodeURIComponent(fact.id)}${query}`, { method: 'DELETE' });
        await render(container, before, subject);
        say(TEXT.deleted);
      },
      { label: `Delete fact: ${firstWords(fact.content)}` },
    ),
  ]);
  facts.className = 'memory-facts';
  const forget = confirmingButton(TEXT.forget, TEXT.confirmForget, async () => {
    const { removed } = await api(`/api/memory${query}`, { method: 'DELETE' });
    await render(container, before, subject);
    say(removed > 0 ? TEXT.forgot(removed) : TEXT.nothingToForget);
  });
  forget.classList.add('danger');
  const actions = element('p', { className: 'page-actions' });
  actions.append(forget);
  container.replaceChildren(...before, facts, actions);
}

/** The operator's user picker: choosing a user shows their memory below it. */
async function renderPicker(container) {
  const heading = container.firstChild;
  const { users } = await api('/api/users');
  if (users.length === 0) {
    container.replaceChildren(heading, element('p', { text: TEXT.noUsers, className: 'empty' }));
    return;
  }
  const picker = element('p', { className: 'memory-picker' });
  const label = element('label', { text: TEXT.pickUser });
  const select = element('select');
  select.id = 'memory-user';
  label.htmlFor = select.id;
  const placeholder = element('option', { text: TEXT.choose });
  placeholder.value = '';
  select.append(placeholder);
  for (const user of users) {
    const option = element('option', { text: user.name });
    option.value = user.id;
    select.append(option);
  }
  picker.append(label, select);
  const before = [heading, picker];
  select.addEventListener('change', () => {
    const user = users.find((entry) => entry.id === select.value);
    if (user === undefined) {
      container.replaceChildren(...before);
      return;
    }
    render(container, before, user).catch(report);
  });
  container.replaceChildren(...before);
}

startPage({
  path: '/console/memory',
  render: (container, me) => (me.is_operator ? renderPicker(container) : render(container, [container.firstChild], null)),
});
