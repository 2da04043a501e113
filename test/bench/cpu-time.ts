/**
 * CPU time of processes, for "CPU ms per message": this process through `process.cpuUsage()`,
 * another one (the server child, PostgreSQL's backends) through /proc (Linux).
 */
import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { postgresConnection } from '../../src/db/postgres-url.js';

/** Clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`); 100 on every Linux we run on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** User + system CPU time of this process so far, in ms. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** User + system CPU time of process `pid` so far, in ms (10 ms resolution); 0 once it is gone. */
export async function processCpuMs(pid: number): Promise<number> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  // The command name (field 2) may hold spaces; fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  return (ticks / CLOCK_TICKS_PER_SECOND) * 1000;
}

/**
 * CPU time spent by the PostgreSQL backends serving one database, between `start()` and
 * `stop()`. Backends are found through `pg_stat_activity` at both ends (the server runs on this
 * machine, so /proc shows them); a backend that appeared in between counts from zero.
 */
export class PostgresCpuMeter {
  private readonly before = new Map<number, number>();
  private readonly admin: postgres.Sql;

  constructor(
    url: string,
    private readonly database: string,
  ) {
    this.admin = adminClient(url);
  }

  async start(): Promise<void> {
    this.before.clear();
    for (const pid of await this.backendPids()) this.before.set(pid, await processCpuMs(pid));
  }

  /** CPU ms of the database's backends since `start()`; ends the meter's own connection. */
  async stop(): Promise<number> {
    let total = 0;
    for (const pid of await this.backendPids()) total += (await processCpuMs(pid)) - (this.before.get(pid) ?? 0);
    // Backends that ended in between are lost; pools keep theirs open for the whole run.
    await this.admin.end({ timeout: 5 });
    return total;
  }

  private async backendPids(): Promise<number[]> {
    const rows = await this.admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${this.database} and pid <> pg_backend_pid()`;
    return rows.map((row) => row.pid);
  }
}

/** A fresh, empty database `dfc_bench_<random>` on the server at `url`; `drop()` removes it. */
export async function createBenchDatabase(url: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `dfc_bench_${Math.random().toString(16).slice(2, 14)}`;
  const admin = adminClient(url);
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const databaseUrl = new URL(url);
  databaseUrl.pathname = `/${name}`;
  return {
    url: databaseUrl.toString(),
    name,
    drop: async () => {
      const dropper = adminClient(url);
      try {
        await dropper`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
        await dropper.unsafe(`drop database if exists ${name}`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
    },
  };
}

/** A one-connection client for the bench's own statements, over a Unix-domain socket when `url` names one. */
export function adminClient(url: string): postgres.Sql {
  const { url: connectionUrl, path } = postgresConnection(url);
  return postgres(connectionUrl, { max: 1, onnotice: () => {}, ...(path === undefined ? {} : { path }) });
}

