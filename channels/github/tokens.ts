import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { App } from '@octokit/app';
import { Octokit } from '@octokit/core';
import { ConfigError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { describeGitHubFailure, GITHUB_HEADERS, GITHUB_REQUEST_TIMEOUT_MS, octokitLog, USER_AGENT } from './client.js';
import type { GitHubConfig } from './config.js';

/** GitHub App installation tokens (reference §7.5). Tokens, JWTs and the private key never reach a log line or an error. */

/** Reuse a token while more than this is left (reference §7.5: "reuse while more than 5 min remain"). */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** Assumed life of a token whose answer lacks a readable `expires_at` ("expire after one hour"). */
const FALLBACK_TOKEN_LIFE_MS = 60 * 60 * 1000;
export interface InstallationTokensOptions {
  /** GitHub App id; the JWT's `iss`. */
  appId: number;
  /** The App's PEM private key (PKCS#1 or PKCS#8; `\n` escapes are accepted). */
  privateKey: string;
  /** REST API root, e.g. `https://api.github.com` or `https://ghe.example.com/api/v3`. */
  apiUrl: string;
  logger: Logger;
  /** Clock for the cache, ms since the epoch. Default `Date.now`. The JWT always uses the real clock. */
  now?: () => number;
  /** Give up on a mint after this long. Default {@link GITHUB_REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** A repository permission level as the access-token request names it. */
export type TokenPermissionLevel = 'read' | 'write';

/**
 * What one token may do: act on one repository of the installation (`owner/name`; the request
 * names it without the owner) with these permissions and no others
 * (https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app).
 */
export interface TokenScope {
  repo: string;
  permissions: Readonly<Record<string, TokenPermissionLevel>>;
}

/** What an agent's shell gets by default: read the code, write issues and pull requests (comments, reviews). */
export const RUN_TOKEN_PERMISSIONS = { contents: 'read', issues: 'write', pull_requests: 'write', metadata: 'read' } as const satisfies TokenScope['permissions'];
/** The write-access check (`GET /repos/{repo}/collaborators/{login}/permission`) needs only metadata. */
export const PERMISSION_CHECK_TOKEN_PERMISSIONS = { metadata: 'read' } as const satisfies TokenScope['permissions'];
/** 👀 on an issue, a pull request or a review comment. */
export const REACTION_TOKEN_PERMISSIONS = { issues: 'write', pull_requests: 'write', metadata: 'read' } as const satisfies TokenScope['permissions'];

interface CachedToken {
  token: string;
  expiresAtMs: number;
}

/**
 * Mints and caches installation access tokens for one GitHub App, each scoped to one repository
 * and the permissions its caller needs ({@link TokenScope}), never the installation's whole reach:
 * an agent woken on one repo cannot touch the installation's others, and the write-access check
 * holds a token that can write nothing. A token is reused, for the same installation and scope
 * only, until 5 minutes before its `expires_at` (60 minutes after minting when GitHub gives none);
 * at most one mint per installation and scope is in flight, and concurrent callers share it.
 */
export class InstallationTokens {
  private readonly app: App;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<string | undefined>>();

  constructor(options: InstallationTokensOptions) {
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? GITHUB_REQUEST_TIMEOUT_MS;
    this.app = new App({
      appId: options.appId,
      privateKey: options.privateKey,
      Octokit: Octokit.defaults({ baseUrl: options.apiUrl, userAgent: USER_AGENT, log: octokitLog(options.logger) }),
    });
  }

  /**
   * Builds the token source from `channels.github`. Returns `undefined` when no App is
   * configured (no `app_id`, or no key); the key comes from `private_key`, else from the file at
   * `private_key_path`.
   * @throws ConfigError when the key file cannot be read or the key is not a usable private key
   *   (the message names the key and the path, never the key itself).
   */
  static fromConfig(
    config: Partial<Pick<GitHubConfig, 'app_id' | 'private_key' | 'private_key_path'>> & Pick<GitHubConfig, 'api_url'>,
    logger: Logger,
  ): InstallationTokens | undefined {
    if (config.app_id === undefined) return undefined;
    const privateKey = config.private_key ?? readKeyFile(config.private_key_path);
    if (privateKey === undefined) {
      logger.warn('channels.github.app_id is set without private_key or private_key_path: no installation tokens will be minted');
      return undefined;
    }
    const source = config.private_key === undefined ? 'private_key_path' : 'private_key';
    try {
      createPrivateKey(privateKey.replace(/\\n/g, '\n'));
    } catch {
      throw new ConfigError([`channels.github.${source}: not a readable PEM private key`]);
    }
    return new InstallationTokens({ appId: config.app_id, privateKey, apiUrl: config.api_url, logger });
  }

  /**
   * A token for `installationId` limited to `scope`, from the cache or freshly minted. Resolves
   * `undefined`, after a warning naming the status or error (never the token or key), when
   * minting fails, the id is not a positive integer or the repo is not `owner/name`: the caller
   * goes on without a token. Never rejects. A failed re-mint falls back to the cached token of
   * the same scope while it has not expired yet.
   */
  async token(installationId: number, scope: TokenScope): Promise<string | undefined> {
    if (!Number.isSafeInteger(installationId) || installationId <= 0) {
      this.logger.warn({ installationId }, 'GitHub installation id is not a positive integer; no token minted');
      return undefined;
    }
    const repository = repositoryNameOf(scope.repo);
    if (repository === undefined) {
      this.logger.warn({ installationId }, 'GitHub token scope names no owner/name repository; no token minted');
      return undefined;
    }
    const key = cacheKeyOf(installationId, scope);
    const cached = this.cache.get(key);
    if (cached && cached.expiresAtMs - this.now() > REFRESH_MARGIN_MS) return cached.token;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const minting = this.mint(installationId, key, { repositories: [repository], permissions: { ...scope.permissions } }).finally(() =>
      this.pending.delete(key),
    );
    this.pending.set(key, minting);
    return minting;
  }

  private async mint(
    installationId: number,
    key: string,
    scope: { repositories: string[]; permissions: Record<string, TokenPermissionLevel> },
  ): Promise<string | undefined> {
    const startedAtMs = this.now();
    try {
      const { data } = await this.app.octokit.request('POST /app/installations/{installation_id}/access_tokens', {
        installation_id: installationId,
        ...scope,
        headers: GITHUB_HEADERS,
        request: { signal: AbortSignal.timeout(this.timeoutMs) },
      });
      const parsedMs = Date.parse(data.expires_at);
      const expiresAtMs = Number.isNaN(parsedMs) ? startedAtMs + FALLBACK_TOKEN_LIFE_MS : parsedMs;
      this.cache.set(key, { token: data.token, expiresAtMs });
      this.logger.debug(
        { installationId, permissions: Object.keys(scope.permissions), expiresAt: new Date(expiresAtMs).toISOString() },
        'GitHub installation token minted for one repository',
      );
      return data.token;
    } catch (error) {
      const stale = this.cache.get(key);
      const isStaleUsable = stale !== undefined && stale.expiresAtMs > this.now();
      this.logger.warn(
        { installationId, ...describeGitHubFailure(error), isStaleUsable },
        isStaleUsable
          ? 'GitHub installation token refresh failed; using the cached token until it expires'
          : 'GitHub installation token mint failed; the run goes on without a token',
      );
      return isStaleUsable ? stale.token : undefined;
    }
  }
}

/** `name` of `owner/name` (the access-token request names repositories of the installation's owner); undefined for anything else. */
function repositoryNameOf(repo: string): string | undefined {
  const match = /^[^/\s]+\/([^/\s]+)$/.exec(repo);
  return match?.[1];
}

/** One cache entry per installation, repository (case-insensitive, as GitHub) and permission set. */
function cacheKeyOf(installationId: number, scope: TokenScope): string {
  const permissions = Object.entries(scope.permissions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, level]) => `${name}=${level}`)
    .join(',');
  return `${installationId}\n${scope.repo.toLowerCase()}\n${permissions}`;
}

/** Reads the key file; `undefined` without a path. */
function readKeyFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError([`channels.github.private_key_path: cannot read ${path} (${typeof code === 'string' ? code : 'error'})`]);
  }
}
