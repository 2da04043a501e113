/**
 * The last hours at a glance (`/console/charts`), from `GET /api/metrics/history`: messages
 * answered and failed per interval, reply time (p50, p95) and errors, as line charts this module
 * draws itself in SVG, with the same numbers in a table under "The numbers". Refreshed while the
 * page is open; the history lives in the server's memory and starts empty after a restart.
 */
import { api, element, formatTime, report, startPage, table } from '/console/shared.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 220;
const MARGIN = { top: 12, right: 16, bottom: 30, left: 52 };
const RANGES = [
  { hours: 1, label: 'Last hour' },
  { hours: 3, label: 'Last 3 hours' },
  { hours: 6, label: 'Last 6 hours' },
];

const TEXT = {
  empty: 'No samples yet: the first one is taken when the server starts.',
  summary: (hours, answered, failed, errors) =>
    `In the last ${hours === 1 ? 'hour' : `${hours} hours`}: ${answered} answered, ${failed} failed, ${errors} errors.`,
  kept: (seconds) => `One point every ${seconds} s, kept in the server's memory for 6 hours (a restart starts empty).`,
};

const CHARTS = [
  {
    id: 'messages',
    title: 'Messages per interval',
    unit: 'messages',
    series: [
      { label: 'Answered', value: (point) => point.answered },
      { label: 'Failed', value: (point) => point.failed },
    ],
  },
  {
    id: 'latency',
    title: 'Reply time',
    unit: 'seconds',
    series: [
      { label: 'p50', value: (point) => point.latency.p50_seconds },
      { label: 'p95', value: (point) => point.latency.p95_seconds },
    ],
  },
  {
    id: 'errors',
    title: 'Errors per interval',
    unit: 'errors',
    series: [{ label: 'Errors', value: (point) => point.errors.total }],
  },
];

/** An SVG element with its attributes (never HTML). */
function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A time on the axis; with seconds when the chart spans less than ten minutes. */
function clockTime(ms, spanMs) {
  const withSeconds = spanMs < 10 * 60 * 1000 ? { second: '2-digit' } : {};
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', ...withSeconds });
}

/** An axis value: at most two decimals, none written when not needed. */
function axisNumber(value) {
  return String(Number(value.toFixed(2)));
}

/** A round top for the y axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max) {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= max) ?? 10 * power;
}

function formatNumber(value) {
  if (value === null || value === undefined) return '—';
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Runs of consecutive points where `value` is known: a gap (no replies, no reply time) breaks the line. */
function segmentsOf(points, value) {
  const segments = [];
  let current = [];
  for (const point of points) {
    const y = value(point);
    if (y === null || y === undefined) {
      if (current.length > 0) segments.push(current);
      current = [];
    } else {
      current.push({ at: Date.parse(point.at), y });
    }
  }
  if (current.length > 0) segments.push(current);
  return segments;
}

/** One line chart: a figure with its caption, axes with their labels, a line per series and a legend. */
function lineChart(chart, points) {
  const figure = element('figure', { className: 'chart' });
  const captionId = `chart-${chart.id}-title`;
  const caption = element('figcaption', { text: chart.title });
  caption.id = captionId;
  const times = points.map((point) => Date.parse(point.at));
  const from = Math.min(...times);
  const to = Math.max(...times);
  const values = chart.series.flatMap((series) => points.map(series.value)).filter((value) => typeof value === 'number');
  const top = niceMax(Math.max(0, ...values));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (at) => MARGIN.left + (to === from ? plotWidth / 2 : ((at - from) / (to - from)) * plotWidth);
  const y = (value) => MARGIN.top + plotHeight - (value / top) * plotHeight;

  const drawing = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-labelledby': captionId, class: 'chart-svg' });
  drawing.append(svg('title', {}, `${chart.title}, ${chart.unit}: ${chart.series.map((series) => series.label).join(', ')}`));
  // Grid and y labels at 0, half and the top.
  for (const fraction of [0, 0.5, 1]) {
    const value = top * fraction;
    drawing.append(svg('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value), class: fraction === 0 ? 'axis' : 'grid' }));
    drawing.append(svg('text', { x: MARGIN.left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'axis-label' }, axisNumber(value)));
  }
  drawing.append(svg('line', { x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotHeight, class: 'axis' }));
  // Time labels: first, middle and last sample.
  const labelTimes = to === from ? [from] : [from, from + (to - from) / 2, to];
  labelTimes.forEach((at, index) => {
    const anchor = labelTimes.length === 1 ? 'middle' : ['start', 'middle', 'end'][index];
    drawing.append(svg('text', { x: x(at), y: HEIGHT - 8, 'text-anchor': anchor, class: 'axis-label' }, clockTime(at, to - from)));
  });
  chart.series.forEach((series, index) => {
    const group = svg('g', { class: `series series-${index}` });
    for (const segment of segmentsOf(points, series.value)) {
      group.append(svg('polyline', { points: segment.map((p) => `${x(p.at).toFixed(1)},${y(p.y).toFixed(1)}`).join(' '), class: 'line' }));
      // A lone point draws no line: a dot shows it.
      if (segment.length === 1) group.append(svg('circle', { cx: x(segment[0].at), cy: y(segment[0].y), r: 3, class: 'dot' }));
    }
    drawing.append(group);
  });

  const legend = element('ul', { className: 'legend' });
  chart.series.forEach((series, index) => {
    const item = element('li', { className: `series-${index}` });
    item.append(element('span', { className: 'swatch' }), document.createTextNode(series.label));
    legend.append(item);
  });
  figure.append(caption, drawing, legend);
  return figure;
}

function numbersTable(points) {
  const rows = [...points].reverse();
  return table(
    'Samples, newest first',
    ['Time', 'Answered', 'Failed', 'Reply time p50 (s)', 'Reply time p95 (s)', 'Errors'],
    rows,
    (point) => [
      formatTime(point.at),
      formatNumber(point.answered),
      formatNumber(point.failed),
      formatNumber(point.latency.p50_seconds),
      formatNumber(point.latency.p95_seconds),
      formatNumber(point.errors.total),
    ],
  );
}

function rangePicker(onChange) {
  const label = element('label', { text: 'Show ' });
  const select = element('select');
  select.id = 'chart-range';
  for (const range of RANGES) {
    const option = element('option', { text: range.label });
    option.value = String(range.hours);
    select.append(option);
  }
  select.value = '6';
  select.addEventListener('change', () => onChange(Number(select.value)));
  label.append(select);
  return label;
}

startPage({
  path: '/console/charts',
  async render(container) {
    let hours = 6;
    const summary = element('p', { className: 'summary' });
    const kept = element('p', { className: 'hint' });
    const charts = element('div', { className: 'charts' });
    const numbers = element('details', { className: 'numbers' });
    const numbersBody = element('div');
    numbers.append(element('summary', { text: 'The numbers' }), numbersBody);
    let timer;
    const refresh = async () => {
      const history = await api(`/api/metrics/history?hours=${hours}`);
      const { points } = history;
      const total = (pick) => points.reduce((sum, point) => sum + pick(point), 0);
      summary.textContent = TEXT.summary(hours, total((p) => p.answered), total((p) => p.failed), total((p) => p.errors.total));
      kept.textContent = TEXT.kept(history.interval_seconds);
      if (points.length === 0) {
        charts.replaceChildren(element('p', { text: TEXT.empty }));
        numbersBody.replaceChildren();
      } else {
        charts.replaceChildren(...CHARTS.map((chart) => lineChart(chart, points)));
        numbersBody.replaceChildren(numbersTable(points));
      }
      if (timer === undefined) {
        // As often as new points come, but not more than every 2 s nor less than every minute.
        const everyMs = Math.min(60, Math.max(2, history.interval_seconds)) * 1000;
        timer = setInterval(() => void refresh().catch(() => {}), everyMs);
      }
    };
    const picker = rangePicker((chosen) => {
      hours = chosen;
      void refresh().catch(report);
    });
    container.replaceChildren(container.firstChild, picker, summary, kept, charts, numbers);
    await refresh();
  },
});
