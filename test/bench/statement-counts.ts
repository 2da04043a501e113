/** Statement counts as pglite-statements.ts reports them: statement text → times sent. */
export type StatementCounts = Record<string, number>;

/** What was sent between two `statementCounts`, per message. */
export function statementsPerMessage(before: StatementCounts, after: StatementCounts, messages: number): StatementCounts {
  const perMessage: StatementCounts = {};
  for (const [text, n] of Object.entries(after)) {
    const sent = n - (before[text] ?? 0);
    if (sent > 0) perMessage[text] = sent / messages;
  }
  return perMessage;
}
