/**
 * The agent's skills (`/console/skills`), from `GET /api/skills`: each with what it is for, where
 * it comes from (shipped `public` or installed `custom`) and whether the agent may use it; the
 * operator switches one on or off with `PUT /api/skills/:name`.
 */
import { api, button, element, say, startPage, table } from '/console/shared.js';

const TEXT = {
  empty: 'No skills are installed. Put SKILL.md folders under skills/public or skills/custom.',
  source: { public: 'Shipped (public)', custom: 'Installed (custom)' },
  on: 'On',
  off: 'Off',
  turnedOn: (name) => `Turned ${name} on.`,
  turnedOff: (name) => `Turned ${name} off.`,
};

function stateCell(skill) {
  const cell = element('span', { className: 'skill-state' });
  const state = element('span', { text: skill.enabled ? TEXT.on : TEXT.off, className: 'state' });
  state.dataset.enabled = String(skill.enabled);
  const toggle = button(
    skill.enabled ? 'Turn off' : 'Turn on',
    async () => {
      const changed = await api(`/api/skills/${encodeURIComponent(skill.name)}`, { method: 'PUT', body: { enabled: !skill.enabled } });
      cell.replaceWith(stateCell(changed));
      // The new button takes the old one's place, so keyboard focus stays on this row.
      document.querySelector(`[aria-label="${CSS.escape(labelOf(changed))}"]`)?.focus();
      say(changed.enabled ? TEXT.turnedOn(changed.name) : TEXT.turnedOff(changed.name));
    },
    { label: labelOf(skill) },
  );
  cell.append(state, toggle);
  return cell;
}

function labelOf(skill) {
  return `${skill.enabled ? 'Turn off' : 'Turn on'} skill ${skill.name}`;
}

startPage({
  path: '/console/skills',
  async render(container) {
    const { skills } = await api('/api/skills');
    const heading = container.firstChild;
    if (skills.length === 0) {
      container.replaceChildren(heading, element('p', { text: TEXT.empty, className: 'empty' }));
      return;
    }
    const rows = table('Skills', ['Skill', 'What it is for', 'Source', 'State'], skills, (skill) => [
      skill.name,
      skill.description,
      TEXT.source[skill.source] ?? skill.source,
      stateCell(skill),
    ]);
    rows.className = 'skills';
    container.replaceChildren(heading, rows);
  },
});
