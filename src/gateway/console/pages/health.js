/**
 * The server at a glance (`/console/health`), from `GET /health`: every channel's state (running,
 * standby behind another process, or retrying and why), the database, the inbound queue, the
 * outbox and the models. Refreshed every few seconds while the page is open.
 */
import { element, startPage, table } from '/console/shared.js';

const REFRESH_MS = 5000;

function channelState(channel) {
  if (channel.running) return 'Running';
  if (channel.standby) return 'Standby (another process holds it)';
  return channel.reason ? `Not running: ${channel.reason}` : 'Not running';
}

function render(container, report) {
  const channels = Object.entries(report.channels).sort(([a], [b]) => a.localeCompare(b));
  const services = [
    ['Database', report.database.ok ? `OK (${report.database.kind})` : `Failing (${report.database.kind}): ${report.database.error ?? ''}`],
    ['Inbound queue', report.bus.ok ? `OK (${report.bus.kind})` : `Failing (${report.bus.kind}): ${report.bus.error ?? ''}`],
    ['Models', report.model.configured ? report.model.models.join(', ') : 'None configured'],
  ];
  if (report.outbox) services.push(['Outbox', `${report.outbox.pending} waiting, ${report.outbox.dead} dead letters`]);
  const summary = element('p', { text: report.ok ? 'The server is healthy.' : 'The server is not healthy: see below.', className: 'summary' });
  summary.dataset.ok = String(report.ok);
  const channelTable =
    channels.length === 0
      ? element('p', { text: 'No channel is enabled. Turn one on under channels: in config.yaml, or use the web chat.' })
      : table('Channels', ['Channel', 'State'], channels, ([name, channel]) => [name, channelState(channel)]);
  container.replaceChildren(container.firstChild, summary, channelTable, table('Services', ['Part', 'State'], services, (row) => row));
}

startPage({
  path: '/console/health',
  async render(container) {
    const refresh = async () => {
      // 503 carries the same report: a failing server is what this page is for.
      const response = await fetch('/health', { cache: 'no-store' });
      render(container, await response.json());
    };
    await refresh();
    setInterval(() => void refresh().catch(() => {}), REFRESH_MS);
  },
});
