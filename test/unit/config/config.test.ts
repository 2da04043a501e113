import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { platforms } from '../../../channels/index.js';
import { forgetVariables, loadConfig, parseConfig } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** Shaped like a GitHub App's key; never used to sign. */
const PEM_KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n';

function writeConfig(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'dfc-config-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, text);
  return path;
}

describe('loadConfig', () => {
  it('accepts config.example.yaml as shipped, with the defaults it documents', () => {
    const path = fileURLToPath(new URL('../../../config.example.yaml', import.meta.url));
    const { config, warnings } = loadConfig({ path, env: { OPENAI_API_KEY: 'sk-x', TELEGRAM_BOT_TOKEN: '1:x' }, platforms });
    expect(warnings).toEqual([]);
    expect(config.sandbox).toEqual({
      bash_access: 'trusted',
      isolation: 'auto',
      network: true,
      pass_env: [],
      read_only_paths: [],
      bash_timeout_seconds: 600,
      max_output_chars: 20_000,
      max_read_chars: 100_000,
    });
    expect(config.memory).toMatchObject({ enabled: true, debounce_seconds: 30, max_facts: 100, fact_confidence_threshold: 0.7 });
    expect(config.goals).toEqual({ enabled: true, max_continuations: 8 });
  });

  it('refuses memory.model_name and goals.evaluator_model that name no configured model', () => {
    const path = writeConfig(
      'models:\n  - { name: default, model: m }\nmemory: { model_name: cheap }\ngoals: { evaluator_model: judge }\n',
    );
    expect(issuesOf(() => loadConfig({ path, env: {}, platforms }))).toEqual([
      'memory.model_name: no model named "cheap" under models:',
      'goals.evaluator_model: no model named "judge" under models:',
    ]);
  });

  it('names every variable the file read, so the server can forget them; other variables stay', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own ${NAME} syntax, not a template.
    const path = writeConfig('models:\n  - { name: default, model: m, api_key: $OPENAI_API_KEY, base_url: "http://${MODEL_HOST}/v1" }\nauth: { admin_token: $UNSET_TOKEN }\n');
    const env: Record<string, string | undefined> = { OPENAI_API_KEY: 'sk-secret', MODEL_HOST: '127.0.0.1:9', PATH: '/usr/bin', BOT_CREDS: 'x' };
    const { config, readVariables } = loadConfig({ path, env, platforms });
    expect(readVariables.sort()).toEqual(['MODEL_HOST', 'OPENAI_API_KEY', 'UNSET_TOKEN']);
    forgetVariables(env, readVariables);
    expect(env).toEqual({ PATH: '/usr/bin', BOT_CREDS: 'x' });
    expect(config.models[0]).toMatchObject({ api_key: 'sk-secret', base_url: 'http://127.0.0.1:9/v1' });
  });

  it('starts on all defaults when no config file exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dfc-config-'));
    const { config, path } = loadConfig({ env: {}, platforms, cwd: dir });
    expect(path).toBeUndefined();
    expect(config.server).toEqual({ host: '127.0.0.1', port: 8001, public_url: 'http://localhost:8001', metrics_public: false });
    expect(config.data_dir).toBe('./.data');
    expect(config.database.url).toBeUndefined();
    expect(config.models).toEqual([]);
    expect(config.channels.max_concurrency).toBe(5);
    expect(config.channels.inbound_queue_maxsize).toBe(1000);
    expect(config.channels.shutdown_grace_period_seconds).toBe(3);
  });

  it('reads the file named by --config before DEERFLOW_CONFIG', () => {
    const chosen = writeConfig('server: { port: 9100 }\n');
    const other = writeConfig('server: { port: 9200 }\n');
    expect(loadConfig({ path: chosen, env: { DEERFLOW_CONFIG: other }, platforms }).config.server.port).toBe(9100);
    expect(loadConfig({ env: { DEERFLOW_CONFIG: other }, platforms }).config.server.port).toBe(9200);
  });

  it('fails when an explicitly named file does not exist', () => {
    expect(issuesOf(() => loadConfig({ path: '/nonexistent/config.yaml', env: {}, platforms }))).toEqual([
      '/nonexistent/config.yaml: config file not found',
    ]);
  });

  it('names the line of a YAML syntax error', () => {
    const path = writeConfig('server:\n  port: [1\n');
    expect(issuesOf(() => loadConfig({ path, env: {}, platforms }))[0]).toMatch(/not valid YAML \(line \d+, column \d+\)/);
  });
});

describe('parseConfig', () => {
  it('fills $NAME and the braced form from the environment', () => {
    const config = parseConfig(
      {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: config syntax under test, not a template
        database: { url: 'postgres://app:${DB_PASS}@db:5432/app' },
        models: [{ name: 'default', model: 'gpt-4o-mini', api_key: '$OPENAI_API_KEY' }],
      },
      { DB_PASS: 's3cret', OPENAI_API_KEY: 'sk-1' },
      platforms,
    );
    expect(config.database.url).toBe('postgres://app:s3cret@db:5432/app');
    expect(config.models[0]?.api_key).toBe('sk-1');
  });

  it('leaves a key absent when its variable is unset, and says so when the key is required', () => {
    const config = parseConfig({ auth: { admin_token: '$DEERFLOW_ADMIN_TOKEN' } }, {}, platforms);
    expect(config.auth.admin_token).toBeUndefined();
    const issues = issuesOf(() => parseConfig({ models: [{ name: 'x', model: '$MODEL_ID' }] }, {}, platforms));
    expect(issues).toEqual([expect.stringMatching(/^models\[0\]\.model: .*\(environment variable MODEL_ID is not set\)$/)]);
  });

  // biome-ignore-start lint/suspicious/noTemplateCurlyInString: the config's own ${NAME} syntax, not templates.
  it('fills ${NAME:-text} with the text when the variable is unset or empty, whole or inside a string', () => {
    const raw = { server: { host: '${HOST:-0.0.0.0}', public_url: 'http://${PUBLIC_HOST:-localhost}:8001' } };
    expect(parseConfig(raw, {}, platforms).server).toMatchObject({ host: '0.0.0.0', public_url: 'http://localhost:8001' });
    expect(parseConfig(raw, { HOST: '', PUBLIC_HOST: '' }, platforms).server).toMatchObject({ host: '0.0.0.0', public_url: 'http://localhost:8001' });
    expect(parseConfig(raw, { HOST: '10.0.0.5', PUBLIC_HOST: 'bot.example.com' }, platforms).server).toMatchObject({
      host: '10.0.0.5',
      public_url: 'http://bot.example.com:8001',
    });
    // An empty default is nothing, as an unset $NAME is: the key takes its own default.
    expect(parseConfig({ server: { host: '${HOST:-}' } }, {}, platforms).server.host).toBe('127.0.0.1');
  });

  it('fills ${NAME:+text} with the text only when the variable is set and not empty', () => {
    const raw = { server: { public_url: 'http://bot${TLS:+s}.example.com' }, auth: { admin_token: '${ADMIN:+0123456789abcdef0123}' } };
    expect(parseConfig(raw, { TLS: '1', ADMIN: 'yes' }, platforms)).toMatchObject({
      server: { public_url: 'http://bots.example.com' },
      auth: { admin_token: '0123456789abcdef0123' },
    });
    const unset = parseConfig(raw, { TLS: '' }, platforms);
    expect(unset.server.public_url).toBe('http://bot.example.com');
    expect(unset.auth.admin_token).toBeUndefined();
  });

  it('reads a key written as a reference, and leaves its entry out when it comes to nothing', () => {
    const path = writeConfig(
      'channels:\n  ${TELEGRAM_BOT_TOKEN:+telegram}:\n    enabled: true\n    bot_token: $TELEGRAM_BOT_TOKEN\n    api_root: ${TELEGRAM_API_ROOT:-https://api.telegram.org}\n' +
        '${OPENAI_API_KEY:+models}:\n  - { name: default, model: m, api_key: $OPENAI_API_KEY }\n',
    );
    const on = loadConfig({ path, env: { TELEGRAM_BOT_TOKEN: '1:x', OPENAI_API_KEY: 'sk-1' }, platforms }).config;
    expect(on.channels.telegram).toMatchObject({ enabled: true, bot_token: '1:x', api_root: 'https://api.telegram.org' });
    expect(on.models).toMatchObject([{ name: 'default', api_key: 'sk-1' }]);

    // Unset: the platform is off and there is no model, not a missing bot_token or api_key.
    const env: Record<string, string | undefined> = { TELEGRAM_API_ROOT: 'http://127.0.0.1:9', PATH: '/usr/bin' };
    const off = loadConfig({ path, env, platforms });
    expect(off.config.channels.telegram).toMatchObject({ enabled: false });
    expect(off.config.models).toEqual([]);
    // What the left-out block named is forgotten all the same.
    forgetVariables(env, off.readVariables);
    expect(env).toEqual({ PATH: '/usr/bin' });
  });

  it('refuses two keys of one mapping that come to the same name', () => {
    expect(issuesOf(() => parseConfig({ channels: { telegram: {}, '${BOT:+telegram}': {} } }, { BOT: '1' }, platforms))).toEqual([
      'channels.telegram: two keys come to "telegram"',
    ]);
  });
  // biome-ignore-end lint/suspicious/noTemplateCurlyInString: see above.

  it('takes server.port as a number or a numeric string, as a variable gives it', () => {
    expect(parseConfig({ server: { port: '$PORT' } }, { PORT: '9300' }, platforms).server.port).toBe(9300);
    expect(parseConfig({ server: { port: 0 } }, {}, platforms).server.port).toBe(0);
    expect(issuesOf(() => parseConfig({ server: { port: '$PORT' } }, { PORT: '70000' }, platforms))[0]).toMatch(/^server\.port: /);
  });

  it('names the key path and the expectation of every invalid key at once', () => {
    const issues = issuesOf(() =>
      parseConfig({ server: { port: 'eighty' }, channels: { max_concurrency: 0, inbound_queue_maxsize: -1 } }, {}, platforms),
    );
    expect(issues).toHaveLength(3);
    expect(issues.some((i) => i.startsWith('server.port: '))).toBe(true);
    expect(issues.some((i) => i.startsWith('channels.max_concurrency: '))).toBe(true);
    expect(issues.some((i) => i.startsWith('channels.inbound_queue_maxsize: '))).toBe(true);
  });

  it('rejects unknown keys so typos do not pass silently', () => {
    expect(issuesOf(() => parseConfig({ sever: { port: 1 } }, {}, platforms))).toEqual(['(root): unknown key "sever"']);
  });

  it('rejects duplicate model names', () => {
    const issues = issuesOf(() =>
      parseConfig({ models: [{ name: 'a', model: 'm1' }, { name: 'a', model: 'm2' }] }, {}, platforms),
    );
    expect(issues).toEqual(['models: model names must be unique']);
  });

  it('takes runtime.url with its key, and the agent on this process without one', () => {
    expect(parseConfig({}, {}, platforms).runtime).toEqual({ timeout_seconds: 30 });
    const config = parseConfig({ runtime: { url: 'http://agent-host:8001/api', api_key: '$AGENT_KEY' } }, { AGENT_KEY: 'k-1' }, platforms);
    expect(config.runtime).toEqual({ url: 'http://agent-host:8001/api', api_key: 'k-1', timeout_seconds: 30 });
  });

  it('refuses a runtime.url that is no API root, and a key without a URL', () => {
    expect(issuesOf(() => parseConfig({ runtime: { url: 'agent-host:8001' } }, {}, platforms))).toEqual(['runtime.url: must use http or https']);
    expect(issuesOf(() => parseConfig({ runtime: { url: 'not a url' } }, {}, platforms))).toEqual([
      'runtime.url: must be an absolute http(s) URL of the agent server API, e.g. http://agent-host:8001/api',
    ]);
    for (const url of ['http://u:p@agent-host/api', 'http://agent-host/api?key=1', 'http://agent-host/api#x']) {
      expect(issuesOf(() => parseConfig({ runtime: { url } }, {}, platforms))).toEqual([
        'runtime.url: must be the API root alone, without credentials, query or fragment (the key goes in api_key)',
      ]);
    }
    expect(issuesOf(() => parseConfig({ runtime: { api_key: 'k' } }, {}, platforms))).toEqual(['runtime.api_key: is only used with runtime.url']);
  });

  it('refuses, with runtime.url, what only an agent in this process would use', () => {
    const issues = issuesOf(() =>
      parseConfig(
        {
          runtime: { url: 'http://agent-host:8001/api' },
          models: [{ name: 'default', model: 'm' }],
          mcp_servers: { files: { command: 'mcp-files' } },
          channels: { github: { enabled: true, webhook_secret: 'whsec-0123456789', app_id: '1', private_key: PEM_KEY }, telegram: { enabled: true, bot_token: '1:x' } },
        },
        {},
        platforms,
      ),
    );
    expect(issues).toEqual([
      'models: not used: the agent runs on the agent server at runtime.url: configure it there',
      'mcp_servers: not used: the agent runs on the agent server at runtime.url: configure it there',
      'channels.github: needs the agent in this process (no runtime.url): its runs get shell credentials that are never sent to another server',
    ]);
    // The kill switch alone (a secret, not enabled) runs no agent: it may stay.
    expect(() => parseConfig({ runtime: { url: 'http://agent-host:8001/api' }, channels: { github: { enabled: false, webhook_secret: 'whsec-0123456789' } } }, {}, platforms)).not.toThrow();
  });

  it('warns about platform blocks this build does not support', () => {
    const path = writeConfig('channels:\n  buzz: { enabled: true }\n  telegrm: { enabled: true }\n');
    expect(loadConfig({ path, env: {}, platforms }).warnings).toEqual([
      'channels.buzz: this build does not support buzz; the block is ignored',
      'channels.telegrm: unknown channel; ignored',
    ]);
  });
});

describe('deploy/config.yaml, the container image\'s configuration', () => {
  const path = fileURLToPath(new URL('../../../deploy/config.yaml', import.meta.url));
  const ENABLED_BY = {
    telegram: { TELEGRAM_BOT_TOKEN: '1:x' },
    slack: { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1' },
    discord: { DISCORD_BOT_TOKEN: 'd-1' },
    feishu: { FEISHU_APP_ID: 'cli_1', FEISHU_APP_SECRET: 's-1' },
    dingtalk: { DINGTALK_CLIENT_ID: 'c-1', DINGTALK_CLIENT_SECRET: 's-1' },
    wechat: { WECHAT_BOT_TOKEN: 'w-1' },
    wecom: { WECOM_BOT_ID: 'aib-1', WECOM_BOT_SECRET: 's-1' },
    github: { GITHUB_WEBHOOK_SECRET: 'whsec-0123456789', GITHUB_APP_ID: '123', GITHUB_APP_PRIVATE_KEY: PEM_KEY },
  } as const;
  const enabledPlatforms = (config: ReturnType<typeof loadConfig>['config']) =>
    Object.keys(ENABLED_BY).filter((name) => (config.channels[name] as { enabled?: boolean } | undefined)?.enabled === true);

  it('with no variable set: all interfaces, the image\'s volume, the embedded database, no model, no platform', () => {
    const { config, warnings } = loadConfig({ path, env: {}, platforms });
    expect(warnings).toEqual([]);
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 8001 });
    expect(config.data_dir).toBe('/data');
    expect(config.database.url).toBeUndefined();
    expect(config.redis.url).toBeUndefined();
    expect(config.auth.admin_token).toBeUndefined();
    expect(config.models).toEqual([]);
    expect(enabledPlatforms(config)).toEqual([]);
    expect(config.sandbox).toMatchObject({ isolation: 'auto', bash_access: 'trusted' });
  });

  it.each(Object.entries(ENABLED_BY))('turns %s on with its credentials alone', (name, variables) => {
    const { config } = loadConfig({ path, env: { ...variables }, platforms });
    expect(enabledPlatforms(config)).toEqual([name]);
  });

  it('takes the services, the model and the server\'s own settings from the environment', () => {
    const env = {
      DATABASE_URL: 'postgres://deerflow:pw@postgres:5432/deerflow',
      REDIS_URL: 'redis://redis:6379',
      DEERFLOW_ADMIN_TOKEN: 'operator-token-0123456789',
      DEERFLOW_PORT: '9400',
      DEERFLOW_SANDBOX_ISOLATION: 'bubblewrap',
      OPENAI_API_KEY: 'sk-1',
      OPENAI_MODEL: 'qwen3',
      OPENAI_BASE_URL: 'http://vllm:8000/v1',
      FEISHU_APP_ID: 'cli_1',
      FEISHU_APP_SECRET: 's-1',
      FEISHU_DOMAIN: 'https://open.larksuite.com',
    };
    const { config } = loadConfig({ path, env, platforms });
    expect(config.database.url).toBe(env.DATABASE_URL);
    expect(config.redis.url).toBe(env.REDIS_URL);
    expect(config.auth.admin_token).toBe(env.DEERFLOW_ADMIN_TOKEN);
    expect(config.server.port).toBe(9400);
    expect(config.sandbox.isolation).toBe('bubblewrap');
    expect(config.models).toMatchObject([{ name: 'default', model: 'qwen3', base_url: 'http://vllm:8000/v1', api_key: 'sk-1' }]);
    expect(config.channels.feishu).toMatchObject({ enabled: true, domain: 'https://open.larksuite.com' });
  });
});
