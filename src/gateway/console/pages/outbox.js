/**
 * Replies not delivered yet (`/console/outbox`, operator), from `GET /api/outbox`: those waiting
 * for another attempt, and dead letters (past their deadline, or refused by the platform).
 * **Retry** sends one dead letter again, **Retry all dead letters** every one
 * (`POST /api/outbox/retry`); the tables are then read again.
 */
import { api, button, element, formatTime, say, startPage, table } from '/console/shared.js';

const LIMIT = 100;

const TEXT = {
  nonePending: 'No reply is waiting for another attempt.',
  noneDead: 'No dead letters.',
  retried: (count) => (count === 1 ? '1 dead letter sent again.' : `${count} dead letters sent again.`),
  nothingRetried: 'Nothing was sent again: that dead letter is gone (sent or retried already).',
};

/** The kind of the last failure (its code, before the detail), never more. */
function errorKind(lastError) {
  if (lastError === null) return '';
  return lastError.split(':')[0].trim();
}

function pendingTable(entries) {
  if (entries.length === 0) return element('p', { text: TEXT.nonePending });
  return table('Waiting for another attempt', ['Channel', 'Target', 'Attempts', 'Last error', 'Next try'], entries, (entry) => [
    entry.channel,
    entry.chat_id,
    String(entry.attempts),
    errorKind(entry.last_error),
    formatTime(entry.next_attempt_at),
  ]);
}

startPage({
  path: '/console/outbox',
  async render(container) {
    const summary = element('p', { className: 'summary' });
    const pending = element('div');
    const dead = element('div');
    const actions = element('p');
    container.append(summary, pending, dead, actions);

    const retry = async (id) => {
      const answer = await api('/api/outbox/retry', { method: 'POST', body: id === undefined ? {} : { id } });
      await load();
      say(answer.retried === 0 ? TEXT.nothingRetried : TEXT.retried(answer.retried));
    };

    const deadTable = (entries) => {
      if (entries.length === 0) return element('p', { text: TEXT.noneDead });
      return table('Dead letters', ['Channel', 'Target', 'Attempts', 'Last error', 'Dead since', 'Action'], entries, (entry) => [
        entry.channel,
        entry.chat_id,
        String(entry.attempts),
        errorKind(entry.last_error),
        formatTime(entry.dead_at),
        button('Retry', () => retry(entry.id), { label: `Retry dead letter ${entry.id} to ${entry.channel} ${entry.chat_id}` }),
      ]);
    };

    const load = async () => {
      const [waiting, letters] = await Promise.all([api(`/api/outbox?state=pending&limit=${LIMIT}`), api(`/api/outbox?state=dead&limit=${LIMIT}`)]);
      summary.textContent = `${letters.pending} waiting, ${letters.dead} dead letters.`;
      pending.replaceChildren(pendingTable(waiting.entries));
      dead.replaceChildren(deadTable(letters.entries));
      actions.replaceChildren(...(letters.entries.length === 0 ? [] : [button('Retry all dead letters', () => retry(undefined))]));
    };
    await load();
  },
});
