/**
 * The agent's runs (`/console/runs`, operator), from `GET /api/runs`: what is running now and what
 * failed lately, with where each ran. **Cancel** stops a running run
 * (`POST /api/threads/:thread_id/runs/:run_id/cancel?wait=true`) and its row then shows the status
 * the server reports. Refreshed every 5 seconds while the page is open.
 */
import { api, button, element, formatTime, say, startPage, table } from '/console/shared.js';

const REFRESH_MS = 5000;
const LIMIT = 50;

const TEXT = {
  noneRunning: 'No run is in progress.',
  noneFailed: 'No run failed lately.',
  statuses: { pending: 'Pending', running: 'Running', success: 'Finished', error: 'Failed', timeout: 'Timed out', interrupted: 'Cancelled' },
};

function statusText(status) {
  return TEXT.statuses[status] ?? status;
}

function whereOf(run) {
  if (run.platform === null) return '';
  return run.chat_id === null ? run.platform : `${run.platform} ${run.chat_id}`;
}

function idCell(id) {
  return element('code', { text: id, className: 'run-id' });
}

/** Cancels `run`, then shows in its row what the server says of it now. */
async function cancel(run, cells) {
  const base = `/api/threads/${encodeURIComponent(run.thread_id)}/runs/${encodeURIComponent(run.run_id)}`;
  await api(`${base}/cancel?wait=true`, { method: 'POST' });
  const now = await api(base);
  cells.status.textContent = statusText(now.status);
  cells.action.replaceChildren();
  say(`Run ${run.run_id} is ${statusText(now.status).toLowerCase()}.`);
}

function runningTable(runs) {
  if (runs.length === 0) return element('p', { text: TEXT.noneRunning, className: 'runs-running' });
  return table('Running', ['Run', 'Where', 'Status', 'Started', 'Action'], runs, (run) => {
    const cells = { status: element('span', { text: statusText(run.status) }), action: element('span') };
    cells.action.append(button('Cancel', () => cancel(run, cells), { label: `Cancel run ${run.run_id}` }));
    return [idCell(run.run_id), whereOf(run), cells.status, formatTime(run.started_at ?? run.created_at), cells.action];
  });
}

function failedTable(runs) {
  if (runs.length === 0) return element('p', { text: TEXT.noneFailed, className: 'runs-failed' });
  return table('Failed', ['Run', 'Where', 'Status', 'Ended', 'Error'], runs, (run) => [
    idCell(run.run_id),
    whereOf(run),
    statusText(run.status),
    formatTime(run.ended_at),
    run.error_kind ?? '',
  ]);
}

startPage({
  path: '/console/runs',
  async render(container) {
    const running = element('div');
    const failed = element('div');
    container.append(running, failed);
    const refresh = async () => {
      const [now, lately] = await Promise.all([api(`/api/runs?status=running&limit=${LIMIT}`), api(`/api/runs?status=failed&limit=${LIMIT}`)]);
      // A row whose Cancel is being pressed is left alone until its answer came.
      if (running.querySelector('button:disabled') === null) running.replaceChildren(runningTable(now.runs));
      failed.replaceChildren(failedTable(lately.runs));
    };
    await refresh();
    setInterval(() => void refresh().catch(() => {}), REFRESH_MS);
  },
});
