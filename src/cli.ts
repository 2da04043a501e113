import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { platforms } from '../channels/index.js';
import { loadConfig } from './config/index.js';
import { openDatabase } from './db/index.js';
import { UsersRepo } from './db/repos/users-repo.js';
import { AppError, ConfigError, describeError } from './errors.js';

const USAGE = `usage: npm run cli -- [--config path] <command>

commands:
  user create <name>   create a server account and print its API key (shown once)
  user list            list accounts`;

/**
 * `npm run cli -- user create <name>`: account management from a shell, on the database the
 * server's config names. A second composition root next to `main.ts`.
 */
async function cli(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { config: { type: 'string', short: 'c' } }, allowPositionals: true });
  const [noun, verb, ...rest] = positionals;
  if (noun !== 'user' || (verb !== 'create' && verb !== 'list') || (verb === 'create' && rest.length !== 1)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const { config } = loadConfig({ path: values.config, env: process.env, platforms });
  const database = await openDatabase({ url: config.database.url, dataDir: resolve(config.data_dir) });
  try {
    const users = new UsersRepo(database.db);
    if (verb === 'list') {
      for (const user of await users.list()) process.stdout.write(`${user.id}\t${user.name}\t${user.createdAt.toISOString()}\n`);
      return 0;
    }
    const { user, apiKey } = await users.create(rest[0] as string);
    process.stdout.write(`created user ${user.name} (${user.id})\napi key (shown once, store it now): ${apiKey}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

cli().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof ConfigError ? error.message : error instanceof AppError ? (error.userMessage ?? error.message) : describeError(error).message;
    process.stderr.write(`deerflow-channels: ${message}\n`);
    process.exit(1);
  },
);
