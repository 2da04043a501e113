/**
 * What the server remembers about the signed-in person (`/console/memory`), from `GET /api/memory`:
 * each fact with its category and since when, a Delete per fact (`DELETE /api/memory/facts/:id`),
 * and Forget everything (`DELETE /api/memory`), which asks for a second press first.
 */
import { api, button, element, formatTime, say, startPage, table } from '/console/shared.js';

const TEXT = {
  empty: 'Nothing is remembered about you yet. Facts appear here as the agent learns them from your chats.',
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

/** A button that only acts on its second press; the first one says so on the button itself. */
function confirmingButton(text, confirmText, onConfirm) {
  let isArmed = false;
  const node = button(text, async () => {
    if (!isArmed) {
      isArmed = true;
      node.textContent = confirmText;
      node.dataset.armed = 'true';
      return;
    }
    await onConfirm();
  });
  return node;
}

async function render(container) {
  const memory = await api('/api/memory');
  const heading = container.firstChild;
  if (memory.facts.length === 0) {
    container.replaceChildren(heading, element('p', { text: TEXT.empty, className: 'empty' }));
    return;
  }
  const facts = table('What the agent remembers about you', ['Fact', 'Category', 'Since', ''], memory.facts, (fact) => [
    fact.content,
    fact.category,
    formatTime(fact.created_at),
    button(
      'Delete',
      async () => {
        await api(`/api/memory/facts/${encodeURIComponent(fact.id)}`, { method: 'DELETE' });
        await render(container);
        say(TEXT.deleted);
      },
      { label: `Delete fact: ${firstWords(fact.content)}` },
    ),
  ]);
  facts.className = 'memory-facts';
  const forget = confirmingButton(TEXT.forget, TEXT.confirmForget, async () => {
    const { removed } = await api('/api/memory', { method: 'DELETE' });
    await render(container);
    say(removed > 0 ? TEXT.forgot(removed) : TEXT.nothingToForget);
  });
  forget.classList.add('danger');
  const actions = element('p', { className: 'page-actions' });
  actions.append(forget);
  container.replaceChildren(heading, facts, actions);
}

startPage({ path: '/console/memory', render });
