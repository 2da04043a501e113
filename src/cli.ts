import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { platforms } from '../channels/index.js';
import { type AccountAdmin, AdminClient } from './admin-client.js';
import { loadConfig } from './config/index.js';
import { AppError, ConfigError, describeError, NotFoundError } from './errors.js';

/** One line per `user` sub-command: in the whole usage and in `user --help`. */
const USER_COMMANDS = `  user create <name>             create a server account and print its API key (shown once)
  user list                      list accounts: id, name, shell (granted or no), status, created
  user grant-shell <name|id>     let the account's runs use bash (accounts mode; default: no shell)
  user revoke-shell <name|id>    take bash away from the account's next runs
  user disable <name|id>         refuse the account's key (403) and its bound chats until enabled
  user enable <name|id>          let a disabled account in again
  user rotate-key <name|id>      replace the account's API key: prints the new one (shown once); the old stops at once
  user delete <name|id> --yes    delete the account, its chat bindings and connect codes (needs --yes)`;

const USER_USAGE = `usage: npm run cli -- [--config path] [--url server-url] user <command>

${USER_COMMANDS}`;

const USAGE = `usage: npm run cli -- [--config path] [--url server-url] <command>   (--help: this text; user --help: user commands)

commands:
${USER_COMMANDS}
  outbox list [pending]          replies not delivered: dead letters (default) or those waiting to be retried
  outbox retry <id|all>          send dead letters again, with a fresh deadline
  health [--check-models]        print the running server's /health (and each model's check on stderr); exit 0
                                 when it answers 200. --check-models: check the models afresh first

user commands work on the database the config names; while an embedded server holds its data
dir they ask that server instead. outbox and health always ask the running server. The server is at
--url, default from server.host and server.port, and is sent auth.admin_token when the config
sets one.`;

/** Each command, by its words, and how many arguments it takes (outbox list: up to one). */
const COMMANDS: Record<string, readonly number[]> = {
  'user create': [1],
  'user list': [0],
  'user grant-shell': [1],
  'user revoke-shell': [1],
  'user disable': [1],
  'user enable': [1],
  'user rotate-key': [1],
  'user delete': [1],
  'outbox list': [0, 1],
  'outbox retry': [1],
  health: [0],
};

/** The command `positionals` name (a noun and a verb, or a noun alone) with its argument, or undefined. */
function parseCommand(positionals: readonly string[]): { noun: string; verb: string; argument: string | undefined } | undefined {
  const [noun = '', verb = ''] = positionals;
  if (COMMANDS[`${noun} ${verb}`]?.includes(positionals.length - 2)) return { noun, verb, argument: positionals[2] };
  if (COMMANDS[noun]?.includes(positionals.length - 1)) return { noun, verb: '', argument: positionals[1] };
  return undefined;
}

/**
 * `npm run cli -- user|outbox <verb> …` and `health`: account management, the outbox and the
 * server's health from a shell, on the database the server's config names or through the running
 * server. A second composition root next to `main.ts`.
 */
async function cli(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      config: { type: 'string', short: 'c' },
      url: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      'check-models': { type: 'boolean' },
      yes: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(`${positionals[0] === 'user' ? USER_USAGE : USAGE}\n`);
    return 0;
  }
  const command = parseCommand(positionals);
  const isMisplacedFlag = values['check-models'] === true && command?.noun !== 'health';
  if (command === undefined || isMisplacedFlag || (command.noun === 'outbox' && !isOutboxArgument(command.verb, command.argument))) {
    process.stderr.write(`${positionals[0] === 'user' ? USER_USAGE : USAGE}\n`);
    return 2;
  }
  const { noun, verb, argument } = command;
  // Deleting cannot be undone: it is refused before anything is opened unless asked for in so many words.
  if (noun === 'user' && verb === 'delete' && values.yes !== true) {
    process.stderr.write(`deerflow-channels: user delete removes ${argument} and cannot be undone; add --yes to delete\n`);
    return 2;
  }
  const { config } = loadConfig({ path: values.config, env: process.env, platforms });
  const host = config.server.host === '0.0.0.0' || config.server.host === '::' ? '127.0.0.1' : config.server.host;
  const server = new AdminClient({ url: values.url ?? `http://${host}:${config.server.port}`, token: config.auth.admin_token });
  if (noun === 'health') return healthCommand(server, values['check-models'] === true);
  if (noun === 'outbox') return outboxCommand(verb, argument, server);
  // Only now: a usage or config error answers before the database is loaded.
  const [{ openDatabase }, { UsersRepo }] = await Promise.all([import('./db/index.js'), import('./db/repos/users-repo.js')]);
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase({ url: config.database.url, dataDir: resolve(config.data_dir), sharedBuffers: config.database.pglite_shared_buffers });
  } catch (error) {
    // The embedded server holds its data dir: it is asked instead (issue #15).
    if (!(error instanceof AppError && error.code === 'DATA_DIR_IN_USE')) throw error;
    return userCommand(verb, argument as string, server);
  }
  try {
    return await userCommand(verb, argument as string, new UsersRepo(database.db));
  } finally {
    await database.close();
  }
}

/** `user <verb> [argument]` on `users`: the database, or the running server. */
async function userCommand(verb: string, argument: string, users: AccountAdmin): Promise<number> {
  switch (verb) {
    case 'list':
      for (const user of await users.list()) {
        const status = user.isDisabled ? 'disabled' : 'active';
        process.stdout.write(`${user.id}\t${user.name}\tshell: ${user.canUseShell ? 'granted' : 'no'}\t${status}\t${user.createdAt.toISOString()}\n`);
      }
      return 0;
    case 'disable':
    case 'enable': {
      const found = await users.findByIdOrName(argument);
      const user = found && (await users.setDisabled(found.id, verb === 'disable'));
      if (!user) throw new NotFoundError('User');
      process.stdout.write(`${user.name} (${user.id}): ${user.isDisabled ? 'disabled' : 'enabled'}\n`);
      return 0;
    }
    case 'rotate-key': {
      const found = await users.findByIdOrName(argument);
      const rotated = found && (await users.rotateKey(found.id));
      if (!rotated) throw new NotFoundError('User');
      process.stdout.write(`new api key for ${rotated.user.name} (${rotated.user.id}); the old one no longer works\napi key (shown once, store it now): ${rotated.apiKey}\n`);
      return 0;
    }
    case 'delete': {
      const found = await users.findByIdOrName(argument);
      if (!found || !(await users.delete(found.id))) throw new NotFoundError('User');
      process.stdout.write(`deleted user ${found.name} (${found.id})\n`);
      return 0;
    }
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
}

/**
 * `health`: what the container image's HEALTHCHECK runs, so it finds the server wherever the
 * config puts it. stdout is the report as JSON; each model's check follows on stderr for a person
 * (a failing model does not change the exit code: the server runs without it).
 */
async function healthCommand(server: AdminClient, isModelCheckForced: boolean): Promise<number> {
  const { isHealthy, report } = await server.health({ checkModels: isModelCheckForced });
  process.stdout.write(`${JSON.stringify(report)}\n`);
  const checks = (report as { model?: { checks?: Record<string, { status: string; detail: string; checked_at: string | null }> } } | null)?.model?.checks ?? {};
  for (const [name, { status, detail, checked_at: checkedAt }] of Object.entries(checks)) {
    process.stderr.write(`model ${name}: ${status}, ${detail}${checkedAt === null ? '' : ` (checked ${checkedAt})`}\n`);
  }
  return isHealthy ? 0 : 1;
}

function isOutboxArgument(verb: string, argument: string | undefined): boolean {
  if (verb === 'list') return argument === undefined || argument === 'pending';
  return argument === 'all' || /^[1-9][0-9]{0,15}$/.test(argument ?? '');
}

interface OutboxEntryJson {
  id: number;
  channel: string;
  chat_id: string;
  chars: number;
  files: number;
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  dead_at: string | null;
  last_error: string | null;
}

/** `outbox list|retry` on the running server: it owns the outbox and sends what is due. */
async function outboxCommand(verb: string, argument: string | undefined, server: AdminClient): Promise<number> {
  if (verb === 'retry') {
    const { retried } = await server.call<{ retried: number }>('/api/outbox/retry', { method: 'POST', body: argument === 'all' ? {} : { id: Number(argument) } });
    process.stdout.write(`${retried} dead letter${retried === 1 ? '' : 's'} sent again\n`);
    return 0;
  }
  const state = argument === 'pending' ? 'pending' : 'dead';
  const listing = await server.call<{ pending: number; dead: number; entries: OutboxEntryJson[] }>(`/api/outbox?state=${state}`);
  process.stdout.write(`outbox: ${listing.pending} pending, ${listing.dead} dead\n`);
  for (const entry of listing.entries) {
    const when = entry.dead_at === null ? `next ${entry.next_attempt_at}` : `dead ${entry.dead_at}`;
    const what = [entry.chars > 0 ? `${entry.chars} chars` : '', entry.files > 0 ? `${entry.files} files` : ''].filter(Boolean).join(', ');
    process.stdout.write(`${entry.id}\t${entry.channel}\t${entry.chat_id}\t${what}\t${entry.attempts} attempts\t${when}\t${entry.last_error ?? ''}\n`);
  }
  return 0;
}

cli().then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof ConfigError ? error.message : error instanceof AppError ? (error.userMessage ?? error.message) : describeError(error).message;
    process.stderr.write(`deerflow-channels: ${message}\n`);
    process.exit(1);
  },
);
