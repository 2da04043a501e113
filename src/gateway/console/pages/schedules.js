/**
 * Scheduled work (`/console/schedules`), from `GET /api/schedules`: a person's own schedules, or
 * everyone's for the operator (who sees a task's length, not its words). Each row says what it
 * does, when it runs next, where it posts and its state; Pause and Resume switch it, Delete
 * cancels it after a second press.
 */
import { api, button, confirmingButton, element, formatTime, say, startPage, table } from '/console/shared.js';

const TEXT = {
  empty: 'No schedules. Make one in a chat with /schedule, e.g. /schedule every day at 9:00 summarise my inbox.',
  hiddenTask: (chars) => `(the owner's words, ${chars} characters)`,
  next: (time) => `next ${time}`,
  state: { active: 'Active', paused: 'Paused', done: 'Done', cancelled: 'Deleted' },
  paused: (id) => `Paused schedule ${id}.`,
  resumed: (id) => `Resumed schedule ${id}.`,
  deleted: (id) => `Deleted schedule ${id}.`,
  confirmDelete: 'Press again to delete',
};

function summaryOf(schedule) {
  const text = schedule.task ?? TEXT.hiddenTask(schedule.task_chars);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function whenOf(schedule) {
  return schedule.next_run_at === null ? schedule.when : `${schedule.when}; ${TEXT.next(formatTime(schedule.next_run_at))}`;
}

function whereOf(schedule) {
  return schedule.topic_id === null ? `${schedule.channel} · ${schedule.chat_id}` : `${schedule.channel} · ${schedule.chat_id} · ${schedule.topic_id}`;
}

function actionsOf(schedule, container) {
  const cell = element('span', { className: 'schedule-actions' });
  const act = (path, method, message) => async () => {
    await api(`/api/schedules/${encodeURIComponent(schedule.id)}${path}`, { method });
    await render(container);
    say(message);
  };
  if (schedule.state === 'active') cell.append(button('Pause', act('/pause', 'POST', TEXT.paused(schedule.id)), { label: `Pause schedule ${schedule.id}` }));
  if (schedule.state === 'paused') cell.append(button('Resume', act('/resume', 'POST', TEXT.resumed(schedule.id)), { label: `Resume schedule ${schedule.id}` }));
  if (schedule.state === 'active' || schedule.state === 'paused') {
    const deleteButton = confirmingButton('Delete', TEXT.confirmDelete, act('', 'DELETE', TEXT.deleted(schedule.id)), { label: `Delete schedule ${schedule.id}` });
    deleteButton.classList.add('danger');
    cell.append(deleteButton);
  }
  return cell;
}

async function render(container) {
  const { schedules } = await api('/api/schedules');
  const heading = container.firstChild;
  if (schedules.length === 0) {
    container.replaceChildren(heading, element('p', { text: TEXT.empty, className: 'empty' }));
    return;
  }
  const rows = table('Schedules', ['Task', 'When', 'Posts to', 'State', ''], schedules, (schedule) => {
    const state = element('span', { text: TEXT.state[schedule.state] ?? schedule.state, className: 'schedule-state' });
    state.dataset.state = schedule.state;
    return [summaryOf(schedule), whenOf(schedule), whereOf(schedule), state, actionsOf(schedule, container)];
  });
  rows.className = 'schedules';
  container.replaceChildren(heading, rows);
}

startPage({ path: '/console/schedules', render });
