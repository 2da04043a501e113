/**
 * `npm run bench [-- --only startup,layers,context,telegram,slack,discord,feishu,dingtalk,wechat,wecom,tools,github,webhooks,scale-out,faults,schedules --kills K --chats N --messages M --conversations K --turns T --long-turns L --rounds R --cpu-prof DIR --database-url postgres://… --redis-url redis://… --group-burst]`:
 * every benchmark (or those `--only` names), each printing its figures next to a baseline measured
 * in the same run. `--group-burst` adds the schedules bench's part 3 (200 results into one Telegram
 * group at its 20 a minute, 10+ minutes; needs `--database-url`).
 */
import { parseArgs } from 'node:util';
import { runContextBench } from './context.js';
import { runDingTalkBench } from './dingtalk.js';
import { runDiscordBench } from './discord.js';
import { runFaultsBench } from './faults.js';
import { runFeishuBench } from './feishu.js';
import { runGitHubBench } from './github.js';
import { runLayersBench } from './layers.js';
import { printPlatformComparison } from './platforms.js';
import { runScaleOutBench } from './scale-out.js';
import { runSchedulesBench } from './schedules.js';
import { buildServerBundle } from './server-process.js';
import { runSlackBench } from './slack.js';
import { runStartupBench } from './startup.js';
import { type PlatformFigures, runTelegramBench } from './telegram.js';
import { runToolBench } from './tools.js';
import { runWebhookMemoryBench } from './webhooks.js';
import { runWeChatBench } from './wechat.js';
import { runWeComBench } from './wecom.js';

// Exit through 'exit' so the child processes are killed too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const BENCHES = ['startup', 'layers', 'context', 'telegram', 'slack', 'discord', 'feishu', 'dingtalk', 'wechat', 'wecom', 'tools', 'github', 'webhooks', 'scale-out', 'faults', 'schedules'] as const;

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: BENCHES.join(',') },
    chats: { type: 'string', default: '50' },
    messages: { type: 'string', default: '20' },
    conversations: { type: 'string', default: '10000' },
    turns: { type: 'string', default: '30' },
    'long-turns': { type: 'string', default: '50' },
    rounds: { type: 'string', default: '1' },
    kills: { type: 'string', default: '20' },
    'cpu-prof': { type: 'string' },
    'database-url': { type: 'string' },
    'redis-url': { type: 'string' },
    'group-burst': { type: 'boolean', default: false },
  },
});

const only = new Set(values.only.split(',').map((name) => name.trim()));
const unknown = [...only].filter((name) => !(BENCHES as readonly string[]).includes(name));
if (unknown.length > 0) {
  process.stderr.write(`bench: --only: unknown benchmark ${unknown.join(', ')}; known: ${BENCHES.join(', ')}\n`);
  process.exit(2);
}
const counts = ['chats', 'messages', 'conversations', 'turns', 'long-turns', 'rounds', 'kills'] as const;
const notCounts = counts.filter((name) => !/^\d+$/.test(values[name]) || (name !== 'long-turns' && Number(values[name]) === 0));
if (notCounts.length > 0) {
  process.stderr.write(`bench: ${notCounts.map((name) => `--${name}`).join(', ')}: a whole number is needed (above 0; --long-turns may be 0)\n`);
  process.exit(2);
}

// Every server below runs as `npm start` runs it: from the bundle of the current sources.
buildServerBundle();
if (only.has('startup')) await runStartupBench({ databaseUrl: values['database-url'] });
if (only.has('layers')) {
  await runLayersBench({
    chats: Number(values.chats),
    messagesPerChat: Number(values.messages),
    databaseUrl: values['database-url'] ?? process.env.DATABASE_URL,
    longTurns: Number(values['long-turns']),
    rounds: Number(values.rounds),
    cpuProfileDir: values['cpu-prof'],
  });
}
if (only.has('context')) await runContextBench({ turns: 200, databaseUrl: values['database-url'] });
const platformFigures = new Map<string, PlatformFigures>();
if (only.has('telegram')) {
  const figures = await runTelegramBench({
    chats: Number(values.chats),
    messagesPerChat: Number(values.messages),
    conversations: Number(values.conversations),
    databaseUrl: values['database-url'],
  });
  platformFigures.set('telegram', figures);
}
// The other chat platforms: the same chats × messages and fake model as Telegram, each on its own fake.
const chatLoad = { chats: Number(values.chats), messagesPerChat: Number(values.messages), databaseUrl: values['database-url'] };
if (only.has('slack')) platformFigures.set('slack', await runSlackBench(chatLoad));
if (only.has('discord')) platformFigures.set('discord', await runDiscordBench(chatLoad));
if (only.has('feishu')) platformFigures.set('feishu', await runFeishuBench(chatLoad));
if (only.has('dingtalk')) platformFigures.set('dingtalk', await runDingTalkBench(chatLoad));
if (only.has('wechat')) platformFigures.set('wechat', await runWeChatBench(chatLoad));
if (only.has('wecom')) platformFigures.set('wecom', await runWeComBench(chatLoad));
printPlatformComparison(platformFigures);
if (only.has('tools')) {
  await runToolBench({ turns: Number(values.turns), databaseUrl: values['database-url'] });
}
if (only.has('github')) await runGitHubBench();
if (only.has('webhooks')) await runWebhookMemoryBench();
if (only.has('scale-out')) {
  await runScaleOutBench({
    chats: Number(values.chats),
    messagesPerChat: Number(values.messages),
    databaseUrl: values['database-url'] ?? process.env.DATABASE_URL,
    redisUrl: values['redis-url'] ?? process.env.REDIS_URL,
  });
}
if (only.has('faults')) await runFaultsBench({ kills: Number(values.kills) });
if (only.has('schedules')) await runSchedulesBench({ databaseUrl: values['database-url'], groupBurst: values['group-burst'] });
// Fakes and watchers hold timers; the figures are printed, so end here.
process.exit(0);
