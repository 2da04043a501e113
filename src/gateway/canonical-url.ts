/** An absolute-form request target (`GET http://host/api/x HTTP/1.1`, RFC 9112 §3.2.2). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
/** `%2e` is a dot (RFC 3986 §2.3): `/%2e%2e/` is a dot segment too. */
const ENCODED_DOT = /%2e/gi;

/**
 * The one spelling of a request target the router sees (Fastify's `rewriteUrl`), so that every
 * spelling of a path reaches the route the canonical one does and is judged by that route's
 * rules: absolute form becomes origin form; `.` and `..` segments are resolved (also `%2e`); empty
 * segments (`//`, a trailing `/`) are dropped. The query is kept as sent. Percent-escapes other
 * than dots stay for the router, which decodes letters (`/%61pi` matches `/api`) and keeps `%2F`
 * inside its segment; upper case is the router's `caseSensitive: false`. Pure.
 */
export function canonicalUrl(target: string): string {
  const originForm = target.replace(ABSOLUTE_FORM, '');
  if (!originForm.startsWith('/')) return originForm === '' ? '/' : originForm; // `*` (OPTIONS) and junk: the router's 404.
  const queryAt = originForm.indexOf('?');
  const path = queryAt === -1 ? originForm : originForm.slice(0, queryAt);
  const query = queryAt === -1 ? '' : originForm.slice(queryAt);
  const segments: string[] = [];
  for (const segment of path.replace(ENCODED_DOT, '.').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join('/')}${query}`;
}
