/**
 * Markdown adapted for DingTalk `sampleMarkdown` (reference §6.5), which has no code blocks,
 * inline code, tables or rules: fenced code → quoted lines under a `> **lang**` header, inline
 * code → bold, pipe tables → `> **Header**: cell` lines, `---` rules → a line of `─`. Pure.
 */
export function toSampleMarkdown(markdown: string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      if (fence[1]) out.push(`> **${fence[1]}**`);
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i] as string); i++) out.push(`> ${lines[i]}`);
      continue;
    }
    if (isTableRow(line) && isTableSeparator(lines[i + 1])) {
      const headers = cells(line);
      for (i += 2; i < lines.length && isTableRow(lines[i] as string); i++) {
        const row = cells(lines[i] as string);
        out.push(...headers.map((header, column) => `> **${header}**: ${row[column] ?? ''}`), '');
      }
      i--;
      continue;
    }
    if (/^\s*(-{3,}|\*{3,}|_{3,})\s*$/.test(line)) {
      out.push('───────────');
      continue;
    }
    out.push(line.replace(/`([^`\n]+)`/g, '**$1**'));
  }
  return out.join('\n');
}

function isTableRow(line: string | undefined): boolean {
  return line !== undefined && /^\s*\|.*\|\s*$/.test(line);
}

function isTableSeparator(line: string | undefined): boolean {
  return line !== undefined && /^\s*\|?(\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*\|?\s*$/.test(line);
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}
