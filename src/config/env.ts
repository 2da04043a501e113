/**
 * `$NAME` and `${NAME}` in config values are read from the environment, and so are two forms
 * of the shell's: `${NAME:-text}` is NAME's value, or `text` when NAME is unset or empty;
 * `${NAME:+text}` is `text` when NAME is set and not empty, else nothing. A whole-string
 * reference that comes to nothing makes the key absent (so optional features stay off and
 * required keys fail validation naming the variable); inside a longer string it comes to "".
 *
 * A mapping key that is one whole reference is read the same way, and its entry is left out
 * when it comes to nothing: under `${TELEGRAM_BOT_TOKEN:+telegram}:` is a block that exists
 * only when the token is set (deploy/config.yaml). What a variable gives is always text.
 */
import { ConfigError } from '../errors.js';

const NAME = '[A-Za-z_][A-Za-z0-9_]*';
/** `${NAME}`, `${NAME:-text}`, `${NAME:+text}`; `text` runs to the first `}`. */
const BRACED = `\\$\\{(${NAME})(?:(:[-+])([^}]*))?\\}`;
const WHOLE = new RegExp(`^(?:${BRACED}|\\$(${NAME}))$`);
const EMBEDDED = new RegExp(BRACED, 'g');

type Operator = ':-' | ':+' | undefined;

export interface SubstitutionResult {
  value: unknown;
  /** Key path (dotted, `[i]` for arrays) → the unset variable it named. */
  missing: Map<string, string>;
  /** Every variable the config named, set or not: the server's own, forgotten once read. */
  read: Set<string>;
}

/** What one reference comes to; undefined = nothing (an unset or empty variable without a default). */
function resolveReference(name: string, operator: Operator, text: string | undefined, env: Record<string, string | undefined>): string | undefined {
  const value = env[name];
  const isSet = value !== undefined && value !== '';
  if (operator === ':-') return isSet ? value : text;
  if (operator === ':+') return isSet ? text : undefined;
  return isSet ? value : undefined;
}

/**
 * Fills every reference in `input` (values, and keys that are one whole reference) from `env`.
 * @throws ConfigError when two keys of one mapping come to the same name.
 */
export function substituteEnv(input: unknown, env: Record<string, string | undefined>): SubstitutionResult {
  const missing = new Map<string, string>();
  const read = new Set<string>();

  /** A whole-string reference: what it comes to ('' counts as nothing), or the string itself when it is none. */
  const whole = (value: string, path: string): { isReference: boolean; resolved: string | undefined } => {
    const match = WHOLE.exec(value);
    if (!match) return { isReference: false, resolved: value };
    const name = (match[1] ?? match[4]) as string;
    read.add(name);
    const resolved = resolveReference(name, match[2] as Operator, match[3], env);
    if (resolved === undefined || resolved === '') {
      missing.set(path, name);
      return { isReference: true, resolved: undefined };
    }
    return { isReference: true, resolved };
  };

  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') {
      const reference = whole(value, path);
      if (reference.isReference) return reference.resolved;
      return value.replace(EMBEDDED, (_match, name: string, operator: Operator, text: string | undefined) => {
        read.add(name);
        // A plain `${NAME}` that is unset is noted; `:-` and `:+` say what unset means.
        if (operator === undefined && env[name] === undefined) missing.set(path, name);
        return resolveReference(name, operator, text, env) ?? '';
      });
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`));
    if (value !== null && typeof value === 'object') return walkMapping(value as Record<string, unknown>, path);
    return value;
  };

  const walkMapping = (mapping: Record<string, unknown>, path: string): Record<string, unknown> => {
    const result: Record<string, unknown> = {};
    for (const [written, item] of Object.entries(mapping)) {
      const key = whole(written, path ? `${path}.${written}` : written).resolved;
      const childPath = path ? `${path}.${key ?? written}` : (key ?? written);
      // Walked even when left out, so that its variables are read (and forgotten) all the same.
      const child = walk(item, childPath);
      if (key === undefined) continue;
      if (Object.hasOwn(result, key)) throw new ConfigError([`${childPath}: two keys come to "${key}"`]);
      result[key] = child;
    }
    return result;
  };

  return { value: walk(input, ''), missing, read };
}
