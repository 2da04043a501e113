/**
 * The server at a glance (`/console/health`), from `GET /health`: every channel's state (running,
 * standby behind another process, or retrying and why), each model's last check, the database,
 * the inbound queue and the outbox. Refreshed every few seconds while the page is open;
 * **Check models now** asks `GET /health?check=models` for a fresh check of the models.
 */
import { button, element, formatTime, say, startPage, table } from '/console/shared.js';

const REFRESH_MS = 5000;

/** What each model check status reads as; `unreachable` and `error` add the check's detail. */
const MODEL_STATES = {
  ok: 'Reachable, key accepted, model found',
  key_refused: 'The model service refused the key',
  model_missing: 'Model not found at the service',
  unverified: 'Reachable, key accepted; the service cannot say whether the model exists',
  pending: 'Checking…',
};

function channelState(channel) {
  if (channel.running) return 'Running';
  if (channel.standby) return 'Standby (another process holds it)';
  return channel.reason ? `Not running: ${channel.reason}` : 'Not running';
}

function modelState(check) {
  if (check.status === 'unreachable') return `Unreachable: ${check.detail}`;
  if (check.status === 'error') return `Failing: ${check.detail}`;
  return MODEL_STATES[check.status] ?? check.status;
}

function modelsView(model) {
  const checks = Object.entries(model.checks ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (checks.length === 0) {
    // A remote agent's models are its server's own: this server lists them but does not check them.
    const text = model.configured ? `Models: ${model.models.join(', ')} (not checked by this server)` : 'No model is configured. Name one under models: in config.yaml.';
    return element('p', { text });
  }
  const view = table('Models', ['Model', 'State', 'Details', 'Last checked'], checks, ([name, check]) => [
    name,
    modelState(check),
    check.status === 'pending' ? '' : check.detail,
    check.checked_at === null ? 'Not yet' : formatTime(check.checked_at),
  ]);
  view.className = 'models';
  for (const [index, [, check]] of checks.entries()) view.tBodies[0].rows[index].dataset.status = check.status;
  return view;
}

function render(view, report) {
  const channels = Object.entries(report.channels).sort(([a], [b]) => a.localeCompare(b));
  const services = [
    ['Database', report.database.ok ? `OK (${report.database.kind})` : `Failing (${report.database.kind}): ${report.database.error ?? ''}`],
    ['Inbound queue', report.bus.ok ? `OK (${report.bus.kind})` : `Failing (${report.bus.kind}): ${report.bus.error ?? ''}`],
  ];
  if (report.outbox) services.push(['Outbox', `${report.outbox.pending} waiting, ${report.outbox.dead} dead letters`]);
  const summary = element('p', { text: report.ok ? 'The server is healthy.' : 'The server is not healthy: see below.', className: 'summary' });
  summary.dataset.ok = String(report.ok);
  const channelTable =
    channels.length === 0
      ? element('p', { text: 'No channel is enabled. Turn one on under channels: in config.yaml, or use the web chat.' })
      : table('Channels', ['Channel', 'State'], channels, ([name, channel]) => [name, channelState(channel)]);
  view.replaceChildren(summary, channelTable, modelsView(report.model), table('Services', ['Part', 'State'], services, (row) => row));
}

/** The report; a 503 carries the same report: a failing server is what this page is for. */
async function fetchReport(query = '') {
  const response = await fetch(`/health${query}`, { cache: 'no-store' });
  return response.json();
}

startPage({
  path: '/console/health',
  async render(container) {
    const view = element('div');
    // A refresh that began before a fresh check ended must not draw over that check's result.
    let generation = 0;
    let isChecking = false;
    const refresh = async () => {
      const started = generation;
      const report = await fetchReport();
      if (started === generation && !isChecking) render(view, report);
    };
    const checkNow = button('Check models now', async () => {
      isChecking = true;
      generation++;
      say('Checking the models…');
      try {
        const report = await fetchReport('?check=models');
        generation++;
        render(view, report);
        const times = Object.values(report.model.checks ?? {}).map((check) => check.checked_at).filter((time) => time !== null);
        say(times.length === 0 ? 'No model to check.' : `Models checked at ${formatTime(times.sort().at(-1))}.`);
      } finally {
        isChecking = false;
      }
    });
    const actions = element('p', { className: 'model-actions' });
    actions.append(checkNow);
    container.replaceChildren(container.firstChild, view, actions);
    await refresh();
    setInterval(() => void refresh().catch(() => {}), REFRESH_MS);
  },
});
