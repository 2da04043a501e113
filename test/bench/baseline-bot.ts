/**
 * The baseline: a bare grammY bot that answers every message with one sendMessage. Run as its own
 * process by the Telegram benchmark, so both sides cross the same process boundary.
 * It sends the same answer text the server's fake model writes.
 * Usage: tsx test/bench/baseline-bot.ts <apiRoot> <token> <answer suffix>
 */
import { Bot } from 'grammy';

const [apiRoot, token, suffix = ''] = process.argv.slice(2);
if (!apiRoot || !token) throw new Error('usage: baseline-bot.ts <apiRoot> <token> <answer suffix>');

const bot = new Bot(token, { client: { apiRoot } });
bot.on('message:text', (ctx) => ctx.reply(`Answer to ${ctx.message.text}${suffix}`, { reply_parameters: { message_id: ctx.message.message_id } }));
process.on('SIGTERM', () => void bot.stop().finally(() => process.exit(0)));
await bot.init();
process.stdout.write('ready\n');
await bot.start({ timeout: 1 });
