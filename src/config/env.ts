/**
 * `$NAME` and `${NAME}` in config values are read from the environment. A whole-string
 * reference to an unset variable makes the key absent (so optional features stay off and
 * required keys fail validation naming the variable); inside a longer string it is an error.
 */

const WHOLE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;
const EMBEDDED = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface SubstitutionResult {
  value: unknown;
  /** Key path (dotted, `[i]` for arrays) → the unset variable it named. */
  missing: Map<string, string>;
  /** Every variable the config named, set or not: the server's own, forgotten once read. */
  read: Set<string>;
}

export function substituteEnv(input: unknown, env: Record<string, string | undefined>): SubstitutionResult {
  const missing = new Map<string, string>();
  const read = new Set<string>();

  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === 'string') {
      const whole = WHOLE.exec(value);
      if (whole) {
        const name = (whole[1] ?? whole[2]) as string;
        read.add(name);
        const resolved = env[name];
        if (resolved === undefined || resolved === '') missing.set(path, name);
        return resolved === '' ? undefined : resolved;
      }
      return value.replace(EMBEDDED, (_match, name: string) => {
        read.add(name);
        const resolved = env[name];
        if (resolved === undefined) {
          missing.set(path, name);
          return '';
        }
        return resolved;
      });
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, walk(item, path ? `${path}.${key}` : key)]),
      );
    }
    return value;
  };

  return { value: walk(input, ''), missing, read };
}
