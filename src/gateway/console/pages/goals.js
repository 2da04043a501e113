/**
 * The goals the agent is working towards (`/console/goals`), from `GET /api/goals`: a person's own
 * threads, or every thread for the operator. Each row names its conversation, the goal, what the
 * goal loop last did and its last verdict; Clear goal removes it (`DELETE /api/threads/:id/goal`).
 */
import { api, button, element, formatTime, say, startPage, table } from '/console/shared.js';

const TEXT = {
  empty: 'No thread has a goal. Set one in a chat with /goal <what you want done>.',
  cleared: 'Cleared the goal.',
  apiThread: 'API thread',
  status: { new: 'Not judged yet', continuing: 'Working on it', stood_down: 'Waiting for you' },
  verdict: {
    satisfied: 'Satisfied',
    not_met_yet: 'Not met yet',
    needs_user_input: 'Needs your input',
    blocked: 'Blocked',
    evaluation_failed: 'Could not judge',
  },
};

function firstWords(text, count = 5) {
  const words = text.trim().split(/\s+/);
  return words.length > count ? `${words.slice(0, count).join(' ')}…` : words.join(' ');
}

function conversationOf(entry) {
  if (entry.conversation === null) return `${TEXT.apiThread} ${entry.thread_id.slice(0, 8)}`;
  return `${entry.conversation.provider} · ${entry.conversation.chat_id}`;
}

function lastEvaluationOf(goal) {
  const evaluation = goal.last_evaluation;
  if (evaluation === null) return '';
  const verdict = TEXT.verdict[evaluation.verdict] ?? evaluation.verdict;
  return `${verdict}: ${evaluation.reason} (${formatTime(evaluation.evaluated_at)})`;
}

async function render(container) {
  const { goals } = await api('/api/goals');
  const heading = container.firstChild;
  if (goals.length === 0) {
    container.replaceChildren(heading, element('p', { text: TEXT.empty, className: 'empty' }));
    return;
  }
  const rows = table('Goals', ['Conversation', 'Goal', 'Status', 'Last verdict', ''], goals, (entry) => [
    conversationOf(entry),
    entry.goal.objective,
    TEXT.status[entry.status] ?? entry.status,
    lastEvaluationOf(entry.goal),
    button(
      'Clear goal',
      async () => {
        await api(`/api/threads/${encodeURIComponent(entry.thread_id)}/goal`, { method: 'DELETE' });
        await render(container);
        say(TEXT.cleared);
      },
      { label: `Clear goal: ${firstWords(entry.goal.objective)}` },
    ),
  ]);
  rows.className = 'goals';
  container.replaceChildren(heading, rows);
}

startPage({ path: '/console/goals', render });
