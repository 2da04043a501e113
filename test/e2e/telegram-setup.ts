import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

export interface TelegramSetup {
  telegram: FakeTelegram;
  model: FakeOpenAI;
  server: ServerProcess;
  /** Stops the server, then the fakes; safe after a failed start. */
  stop(): Promise<void>;
}

/**
 * The real server with Telegram alone, against a fake Bot API and a fake model whose one entry
 * under `models:` has `modelFields` added (YAML flow-map fields, e.g. `context_window: 8192`);
 * `extraConfig` is appended at the top level (whole YAML sections); `env` is added to the
 * server's environment; `telegramFields` are added to the channel's block (e.g. `allowed_users: [42]`). Memory is off: these tests
 * count the model's requests.
 */
export async function startTelegramChat(
  modelFields = '',
  extraConfig = '',
  env: Record<string, string> = {},
  telegramFields = '',
): Promise<TelegramSetup> {
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  let server: ServerProcess | undefined;
  const stop = async () => {
    await server?.stop();
    await Promise.all([telegram.stop(), model.stop()]);
  };
  try {
    await Promise.all([telegram.start(), model.start()]);
    const config = `server: { port: 0 }
models:
  - { name: default, model: gpt-4o, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0${modelFields === '' ? '' : `, ${modelFields}`} }
memory: { enabled: false }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1${telegramFields === '' ? '' : `, ${telegramFields}`} }
${extraConfig}`;
    server = await startServerProcess(['--config', writeConfig(config).path], { env });
    return { telegram, model, server, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
