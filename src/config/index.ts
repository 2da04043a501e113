import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { intakeConfigShape } from '../bus/config.js';
import type { ChannelDefinition } from '../channel/types.js';
import { ConfigError } from '../errors.js';
import { conversationConfigShape } from '../manager/config.js';
import { substituteEnv } from './env.js';
import { buildConfigSchema, type Config, UNSUPPORTED_PLATFORMS } from './schema.js';

export type { Config } from './schema.js';

export interface LoadConfigOptions {
  /** `--config` from the command line. */
  path?: string | undefined;
  env: Record<string, string | undefined>;
  platforms: readonly ChannelDefinition[];
  cwd?: string;
}

export interface LoadedConfig {
  config: Config;
  /** The file read, or undefined when none exists and defaults apply. */
  path: string | undefined;
  /** Non-fatal findings, e.g. a block for a platform this build does not have. */
  warnings: string[];
  /** The environment variables the file named (`$NAME`): hand them to `forgetVariables` once loaded. */
  readVariables: string[];
}

/**
 * Reads config.yaml (from `--config`, else `DEERFLOW_CONFIG`, else `./config.yaml`), fills
 * `$NAME` from the environment and validates everything at once. This is the only module that
 * reads `process.env`-style input; everything else receives parsed config.
 * @throws ConfigError listing every invalid key as `<path>: <expectation>`.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.path ?? options.env.DEERFLOW_CONFIG;
  const path = resolve(cwd, explicit ?? 'config.yaml');
  let raw: unknown = {};
  if (existsSync(path)) {
    raw = readYaml(path);
  } else if (explicit) {
    throw new ConfigError([`${explicit}: config file not found`]);
  }
  const { config, read } = parseConfigReading(raw, options.env, options.platforms);
  return {
    config,
    path: existsSync(path) ? path : undefined,
    warnings: findWarnings(config, options.platforms),
    readVariables: [...read],
  };
}

/** Validates an already-read config object. */
export function parseConfig(raw: unknown, env: Record<string, string | undefined>, platforms: readonly ChannelDefinition[]): Config {
  return parseConfigReading(raw, env, platforms).config;
}

function parseConfigReading(raw: unknown, env: Record<string, string | undefined>, platforms: readonly ChannelDefinition[]) {
  const { value, missing, read } = substituteEnv(withoutEmptyKeys(raw ?? {}), env);
  const result = buildConfigSchema(platforms).safeParse(value);
  if (!result.success) throw new ConfigError(formatIssues(result.error.issues, missing));
  return { config: result.data, read };
}

/**
 * Removes the variables the config has read from `env` (the process environment): their values
 * live in the parsed config now, and nothing that later reads or inherits the environment (a
 * library, a child process, a crash report) gets them. The kernel's copy of the environment the
 * process started with (`/proc/<pid>/environ`) is not changed by this: the sandbox keeps the
 * agent's processes away from it (docs/security.md).
 */
export function forgetVariables(env: Record<string, string | undefined>, names: Iterable<string>): void {
  for (const name of names) delete env[name];
}

/**
 * YAML reads `key:` with nothing after it (or only commented-out children, as in
 * config.example.yaml) as null; that means "not set", so the key takes its default.
 */
function withoutEmptyKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEmptyKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, child]) => child !== null)
      .map(([key, child]) => [key, withoutEmptyKeys(child)]),
  );
}

function readYaml(path: string): unknown {
  try {
    return parseYaml(readFileSync(path, 'utf8')) ?? {};
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const where = error.linePos?.[0] ? ` (line ${error.linePos[0].line}, column ${error.linePos[0].col})` : '';
      throw new ConfigError([`${path}: not valid YAML${where}`], { cause: error });
    }
    throw new ConfigError([`${path}: cannot be read`], { cause: error });
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '');
}

function formatIssues(issues: readonly z.core.$ZodIssue[], missing: Map<string, string>): string[] {
  return issues.map((issue) => {
    const path = formatPath(issue.path) || '(root)';
    const envName = missing.get(path);
    const envNote = envName ? ` (environment variable ${envName} is not set)` : '';
    if (issue.code === 'unrecognized_keys') {
      return `${path}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    }
    return `${path}: ${issue.message}${envNote}`;
  });
}

function findWarnings(config: Config, platforms: readonly ChannelDefinition[]): string[] {
  const expected = new Set([...Object.keys(intakeConfigShape), ...Object.keys(conversationConfigShape), ...platforms.map((p) => p.name)]);
  return Object.keys(config.channels)
    .filter((key) => !expected.has(key))
    .map((key) =>
      (UNSUPPORTED_PLATFORMS as readonly string[]).includes(key)
        ? `channels.${key}: this build does not support ${key}; the block is ignored`
        : `channels.${key}: unknown channel; ignored`,
    );
}
