/**
 * The connection audit trail (`/console/audit`, operator), from `GET /api/audit/connections`:
 * who bound or unbound which chat identity, and every refused connect code, newest first.
 * **Older** reads the next page back, **Newest** returns to the first. User ids are shown by name
 * where `GET /api/users` knows them.
 */
import { api, button, element, formatTime, pageSize, startPage, table } from '/console/shared.js';

/** Rows per page: 50, or `?per_page=` of the page's address (1 to 200). */
const PAGE_SIZE = pageSize(50);

const TEXT = {
  none: 'Nothing has happened yet: no identity was bound, and no code was refused.',
  noOlder: 'There are no older events.',
  events: {
    bound: 'Bound',
    taken_over: 'Taken over',
    unbound: 'Unbound',
    code_rejected: 'Code rejected',
    code_refused_account_limit: 'Code refused (sender over its limit)',
    code_refused_provider_limit: 'Code refused (platform over its limit)',
  },
};

startPage({
  path: '/console/audit',
  async render(container) {
    const { users } = await api('/api/users');
    const names = new Map(users.map((user) => [user.id, user.name]));
    const list = element('div');
    const pager = element('p', { className: 'pager' });
    container.append(list, pager);

    const load = async (before) => {
      const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
      if (before !== undefined) query.set('before', String(before));
      const answer = await api(`/api/audit/connections?${query}`);
      list.replaceChildren(
        answer.events.length === 0
          ? element('p', { text: before === undefined ? TEXT.none : TEXT.noOlder })
          : table('Connection events, newest first', ['When', 'User', 'Platform', 'Event', 'Account', 'Workspace'], answer.events, (event) => [
              formatTime(event.created_at),
              event.user_id === null ? '' : (names.get(event.user_id) ?? event.user_id),
              event.provider,
              TEXT.events[event.event_type] ?? event.event_type,
              event.external_account_id,
              event.workspace_id ?? '',
            ]),
      );
      const controls = [];
      if (before !== undefined) controls.push(button('Newest', () => load(undefined)));
      if (answer.next_before !== null) controls.push(button('Older', () => load(answer.next_before)));
      pager.replaceChildren(...controls);
    };
    await load(undefined);
  },
});
