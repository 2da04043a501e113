import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { platforms } from '../channels/index.js';
import { loadConfig } from './config/index.js';
import { AppError, ConfigError, describeError, NotFoundError } from './errors.js';

const USAGE = `usage: npm run cli -- [--config path] <command>

commands:
  user create <name>             create a server account and print its API key (shown once)
  user list                      list accounts: id, name, shell (granted or no), created
  user grant-shell <name|id>     let the account's runs use bash (accounts mode; default: no shell)
  user revoke-shell <name|id>    take bash away from the account's next runs`;

/** Each verb and how many arguments it takes. */
const VERBS: Record<string, number> = { create: 1, list: 0, 'grant-shell': 1, 'revoke-shell': 1 };

/**
 * `npm run cli -- user <verb> …`: account management from a shell, on the database the
 * server's config names. A second composition root next to `main.ts`.
 */
async function cli(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { config: { type: 'string', short: 'c' } }, allowPositionals: true });
  const [noun, verb, ...rest] = positionals;
  if (noun !== 'user' || verb === undefined || VERBS[verb] !== rest.length) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const { config } = loadConfig({ path: values.config, env: process.env, platforms });
  // Only now: a usage or config error answers before the database is loaded.
  const [{ openDatabase }, { UsersRepo }] = await Promise.all([import('./db/index.js'), import('./db/repos/users-repo.js')]);
  const database = await openDatabase({ url: config.database.url, dataDir: resolve(config.data_dir), sharedBuffers: config.database.pglite_shared_buffers });
  try {
    const users = new UsersRepo(database.db);
    const [argument] = rest as [string];
    switch (verb) {
      case 'list':
        for (const user of await users.list()) {
          process.stdout.write(`${user.id}\t${user.name}\tshell: ${user.canUseShell ? 'granted' : 'no'}\t${user.createdAt.toISOString()}\n`);
        }
        return 0;
      case 'grant-shell':
      case 'revoke-shell': {
        const found = await users.findByIdOrName(argument);
        const user = found && (await users.setCanUseShell(found.id, verb === 'grant-shell'));
        if (!user) throw new NotFoundError('User');
        process.stdout.write(`${user.name} (${user.id}): shell ${user.canUseShell ? 'granted' : 'revoked'}\n`);
        return 0;
      }
      default: {
        const { user, apiKey } = await users.create(argument);
        process.stdout.write(`created user ${user.name} (${user.id})\napi key (shown once, store it now): ${apiKey}\n`);
        return 0;
      }
    }
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
