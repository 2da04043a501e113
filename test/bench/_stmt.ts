import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/index.js';
import { RunStore } from '../../src/runtime/embedded/run-store.js';
import { SqlDedupeStore } from '../../src/db/repos/inbound-dedupe-repo.js';
import { sql } from 'drizzle-orm';
const dir = mkdtempSync(join(tmpdir(), 'stmt-'));
const db = await openDatabase({ dataDir: dir });
const store = new RunStore(db.db, 30000);
const dedupe = new SqlDedupeStore(db.db);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const threads: string[] = [];
for (let i = 0; i < 200; i++) { const id = randomUUID(); await store.createThread(id, {}, 'raise'); threads.push(id); }
async function time(name: string, n: number, f: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await f(i + 100000);
  const c0 = cpu(), t0 = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  console.log(name.padEnd(30), ((cpu() - c0) / n).toFixed(3), 'ms cpu', ((performance.now() - t0) / n).toFixed(3), 'ms wall');
}
const runs: { id: string; threadId: string }[] = [];
for (let round = 0; round < 2; round++) {
  runs.length = 0;
  await time('admitRun', 400, async (i) => { const threadId = threads[i % 200]!; const id = randomUUID(); const r = await store.admitRun({ id, threadId, assistantId: 'lead_agent', metadata: {}, kwargs: { config: { recursion_limit: 100 }, context: { thread_id: threadId, channel_name: 'telegram', user_id: 'u', channel_user_id: '1', trusted_sender: false }, stream_mode: ['messages-tuple', 'values'] } }); if (i >= 0 && i < 100000) runs.push({ id, threadId }); await store.finishRunUnlessGoal({ id, threadId }, { status: 'success' }); });
  await time('finishRunUnlessGoal (no-op)', 400, async (i) => { await store.finishRunUnlessGoal(runs[i % runs.length]!, { status: 'success' }); });
  await time('dedupe claim', 400, async (i) => { await dedupe.acquire({ channel: 'telegram', workspaceId: 'w', chatId: String(i % 50), messageId: `${round}-${i}-${Math.random()}` }); });
  await time('select 1', 400, async () => { await db.db.execute(sql`select 1`); });
}
await db.close();
