/**
 * `npm run bench [-- --chats N --messages M --conversations K --database-url postgres://…]`: every benchmark, each printing
 * its figures next to a baseline measured in the same run.
 */
import { parseArgs } from 'node:util';
import { runTelegramBench } from './telegram.js';

// Exit through 'exit' so the child processes are killed too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const { values } = parseArgs({
  options: {
    chats: { type: 'string', default: '50' },
    messages: { type: 'string', default: '20' },
    conversations: { type: 'string', default: '10000' },
    'database-url': { type: 'string' },
  },
});

await runTelegramBench({
  chats: Number(values.chats),
  messagesPerChat: Number(values.messages),
  conversations: Number(values.conversations),
  databaseUrl: values['database-url'],
});
// Fakes and watchers hold timers; the figures are printed, so end here.
process.exit(0);
