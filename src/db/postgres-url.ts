/**
 * What postgres-js needs to connect to a `database.url`, which may name a Unix-domain socket the
 * way libpq does: `postgres://user@/db?host=/var/run/postgresql` (the socket's directory; the
 * port, 5432 unless the URL gives one, names the socket file). postgres-js would send `host` to
 * the server as a setting (and refuse the URL's empty host), so it is taken out of the URL and
 * given as the socket's path. Any other URL is passed on as it is.
 */
export function postgresConnection(url: string): { url: string; path?: string } {
  const [base = url, query] = url.split('?', 2) as [string, string | undefined];
  if (query === undefined) return { url };
  const params = new URLSearchParams(query);
  const socketDir = params.get('host');
  if (socketDir === null || !socketDir.startsWith('/')) return { url };
  params.delete('host');
  const port = /^[a-z]+:\/\/(?:[^@/]*@)?[^/:]*:(\d+)\//.exec(base)?.[1] ?? '5432';
  const rest = params.toString();
  // postgres-js parses the URL with `new URL`, which refuses an empty host; the path wins over it.
  const withHost = base.replace(/^([a-z]+:\/\/(?:[^@/]*@)?)(?=[:/])/, '$1localhost');
  return { url: rest === '' ? withHost : `${withHost}?${rest}`, path: `${socketDir.replace(/\/+$/, '')}/.s.PGSQL.${port}` };
}
