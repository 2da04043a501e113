import { AppError } from './errors.js';

/** A server account as the CLI shows it, from the database or from the running server. */
export interface AccountRecord {
  id: string;
  name: string;
  canUseShell: boolean;
  isDisabled: boolean;
  createdAt: Date;
}

/** What the CLI's `user` commands need: `UsersRepo` on the database, or the running server's API. */
export interface AccountAdmin {
  list(): Promise<AccountRecord[]>;
  findByIdOrName(idOrName: string): Promise<AccountRecord | undefined>;
  setCanUseShell(id: string, canUseShell: boolean): Promise<AccountRecord | undefined>;
  create(name: string): Promise<{ user: AccountRecord; apiKey: string }>;
  setDisabled(id: string, isDisabled: boolean): Promise<AccountRecord | undefined>;
  rotateKey(id: string): Promise<{ user: AccountRecord; apiKey: string } | undefined>;
  /** False when no such user exists. */
  delete(id: string): Promise<boolean>;
}

interface UserJson {
  id: string;
  name: string;
  can_use_shell: boolean;
  disabled: boolean;
  created_at: string;
}

const toRecord = (user: UserJson): AccountRecord => ({
  id: user.id,
  name: user.name,
  canUseShell: user.can_use_shell,
  isDisabled: user.disabled,
  createdAt: new Date(user.created_at),
});

/**
 * The running server's operator API (`docs/api.md`), for the CLI: while an embedded server holds
 * its data dir, and for the outbox, which the server sends. Authenticates with `auth.admin_token`
 * when the config has one.
 */
export class AdminClient implements AccountAdmin {
  constructor(private readonly server: { url: string; token: string | undefined }) {}

  /**
   * Calls `path`; resolves with the JSON body. Rejects with an `AppError` whose `userMessage` says
   * what to do: no server at the URL, or the server's own refusal.
   */
  async call<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
    const { token } = this.server;
    const response = await this.request(path, init);
    const body = (await response.json().catch(() => ({}))) as T & { message?: string };
    if (response.ok) return body;
    const hint = response.status === 401 && token === undefined ? ' (set auth.admin_token in the config: the server wants the operator token)' : '';
    throw new AppError(response.status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST', 'server refused', {
      userMessage: `the server answered ${response.status}: ${body.message ?? 'no reason given'}${hint}`,
    });
  }

  /**
   * `GET /health`: whether the server answers 200, and the report it gives either way;
   * `checkModels`: the models are checked afresh first (`?check=models`).
   * Rejects like {@link call} when no server answers.
   */
  async health(options: { checkModels?: boolean } = {}): Promise<{ isHealthy: boolean; report: unknown }> {
    const response = await this.request(options.checkModels === true ? '/health?check=models' : '/health', {});
    return { isHealthy: response.status === 200, report: await response.json().catch(() => null) };
  }

  private async request(path: string, init: { method?: string; body?: unknown }): Promise<Response> {
    const { url, token } = this.server;
    try {
      return await fetch(new URL(path, url), {
        method: init.method ?? 'GET',
        headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
    } catch {
      throw new AppError('CHANNEL_UNAVAILABLE', 'server unreachable', { userMessage: `no server answers at ${url} (start it, or pass --url)` });
    }
  }

  async list(): Promise<AccountRecord[]> {
    return (await this.call<{ users: UserJson[] }>('/api/users')).users.map(toRecord);
  }

  async findByIdOrName(idOrName: string): Promise<AccountRecord | undefined> {
    return (await this.list()).find((user) => user.id === idOrName || user.name === idOrName);
  }

  async setCanUseShell(id: string, canUseShell: boolean): Promise<AccountRecord | undefined> {
    const { user } = await this.call<{ user: UserJson }>(`/api/users/${encodeURIComponent(id)}`, { method: 'PATCH', body: { can_use_shell: canUseShell } });
    return toRecord(user);
  }

  async setDisabled(id: string, isDisabled: boolean): Promise<AccountRecord | undefined> {
    const { user } = await this.call<{ user: UserJson }>(`/api/users/${encodeURIComponent(id)}`, { method: 'PATCH', body: { disabled: isDisabled } });
    return toRecord(user);
  }

  async rotateKey(id: string): Promise<{ user: AccountRecord; apiKey: string } | undefined> {
    const { user, api_key: apiKey } = await this.call<{ user: UserJson; api_key: string }>(`/api/users/${encodeURIComponent(id)}/rotate-key`, { method: 'POST' });
    return { user: toRecord(user), apiKey };
  }

  async delete(id: string): Promise<boolean> {
    await this.call<unknown>(`/api/users/${encodeURIComponent(id)}`, { method: 'DELETE' });
    return true;
  }

  async create(name: string): Promise<{ user: AccountRecord; apiKey: string }> {
    const { user, api_key: apiKey } = await this.call<{ user: UserJson; api_key: string }>('/api/users', { method: 'POST', body: { name } });
    return { user: toRecord(user), apiKey };
  }
}
