/**
 * The agents of the agents folder (`/console/agents`), from `GET /api/agents`: one row per agent
 * with its description, model, skills and tools, its GitHub bindings (repository and the events
 * that wake it there) and whether it is on. Read-only: agents are files (docs/github.md).
 */
import { api, element, startPage, table } from '/console/shared.js';

const TEXT = {
  runModel: 'The run’s model',
  all: 'All',
  none: 'None',
  enabled: 'Enabled',
  disabled: 'Disabled (GitHub does not wake it)',
  inChat: 'offered in chat',
  count: (n) => (n === 1 ? 'One agent.' : `${n} agents.`),
};

function list(items, describe) {
  const node = element('ul', { className: 'plain' });
  for (const item of items) node.append(element('li', { text: describe(item) }));
  return node;
}

function skillsAndTools(agent) {
  if (agent.skills === null && agent.tools === null) return TEXT.all;
  const lines = [];
  lines.push(`Skills: ${agent.skills === null ? TEXT.all : agent.skills.join(', ') || TEXT.none}`);
  lines.push(`Tools: ${agent.tools === null ? TEXT.all : agent.tools.join(', ') || TEXT.none}`);
  return list(lines, (line) => line);
}

function bindings(agent) {
  if (agent.github_bindings.length === 0) return TEXT.none;
  return list(agent.github_bindings, (binding) => `${binding.repo}: ${binding.events.join(', ') || TEXT.none}`);
}

function state(agent) {
  const words = [agent.enabled ? TEXT.enabled : TEXT.disabled];
  if (agent.in_chat) words.push(TEXT.inChat);
  const node = element('span', { text: words.join(', ') });
  if (agent.problem !== null) {
    const problem = element('strong', { text: ` ${agent.problem}`, className: 'problem' });
    node.append(problem);
  }
  return node;
}

startPage({
  path: '/console/agents',
  async render(container) {
    const { agents } = await api('/api/agents');
    const rows = table('Agents', ['Agent', 'Description', 'Model', 'Skills and tools', 'GitHub bindings', 'State'], agents, (agent) => [
      agent.name,
      agent.description,
      agent.model ?? TEXT.runModel,
      skillsAndTools(agent),
      bindings(agent),
      state(agent),
    ]);
    rows.className = 'agents';
    container.replaceChildren(container.firstChild, element('p', { text: TEXT.count(agents.length), className: 'summary' }), rows);
  },
});
