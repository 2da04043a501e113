import { describe, expect, it } from 'vitest';
import { postgresConnection } from '../../../src/db/postgres-url.js';

describe('postgresConnection', () => {
  it.each([
    ['a TCP URL, as it is', 'postgres://u:p@127.0.0.1:5432/db', { url: 'postgres://u:p@127.0.0.1:5432/db' }],
    ['other settings, as they are', 'postgres://u@h/db?sslmode=require', { url: 'postgres://u@h/db?sslmode=require' }],
    ['a host that is not a directory, as it is', 'postgres://u@h/db?host=h2', { url: 'postgres://u@h/db?host=h2' }],
    [
      "libpq's socket form, with no host in the authority",
      'postgres://postgres@/postgres?host=/var/run/postgresql',
      { url: 'postgres://postgres@localhost/postgres', path: '/var/run/postgresql/.s.PGSQL.5432' },
    ],
    ['no user either', 'postgres:///db?host=/tmp/', { url: 'postgres://localhost/db', path: '/tmp/.s.PGSQL.5432' }],
    ['the port naming the socket file', 'postgres://u@localhost:5433/db?host=/s', { url: 'postgres://u@localhost:5433/db', path: '/s/.s.PGSQL.5433' }],
    [
      'the other settings kept',
      'postgres://u:p@/db?host=/s&application_name=x',
      { url: 'postgres://u:p@localhost/db?application_name=x', path: '/s/.s.PGSQL.5432' },
    ],
  ])('reads %s', (_case, url, expected) => {
    expect(postgresConnection(url)).toEqual(expected);
  });
});
