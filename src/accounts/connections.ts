import type { ChannelDefinition, ChatBinder, ChatBindRequest, ChatIdentity, ConnectOffer } from '../channel/types.js';
import type { Database } from '../db/index.js';
import { ConnectCodesRepo } from '../db/repos/connect-codes-repo.js';
import {
  type ActiveConnection,
  type CodeRefusalKind,
  type ConnectionEvent,
  type ConnectionRecord,
  ConnectionsRepo,
} from '../db/repos/connections-repo.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ChannelConnectionsConfig, ProviderConnectionConfig } from './config.js';

/** A platform as the console shows it (reference §8.4 `ChannelProvider`, the fields we have). */
export interface ProviderInfo {
  provider: string;
  display_name: string;
  enabled: boolean;
  configured: boolean;
  connectable: boolean;
  unavailable_reason: string | null;
  auth_mode: ConnectOffer['mode'];
  connection_status: 'connected' | 'not_connected' | 'revoked';
}

export interface ConnectionInfo {
  id: string;
  provider: string;
  status: 'connected' | 'revoked';
  external_account_id: string;
  external_account_name: string | null;
  workspace_id: string | null;
  workspace_name: string | null;
  created_at: string;
  updated_at: string;
}

export interface ConnectResponse extends ConnectOffer {
  provider: string;
  code: string;
  expires_in: number;
}

export interface ChannelConnectionsOptions {
  db: Database;
  config: ChannelConnectionsConfig;
  /** The registered platforms: names, display names, connect offers. */
  platforms: readonly ChannelDefinition[];
  /** Whether a platform's channel is running in this server (its config block enabled and started). */
  isRunning: (provider: string) => boolean;
  logger: Logger;
  now?: () => Date;
}

/** Reference §8.4 texts. */
const TEXT = {
  disabled: 'Channel connections are disabled',
  unknownProvider: 'Unknown channel provider',
  providerDisabled: 'Channel provider is not enabled',
  notRunning: (display: string) => `${display} channel is configured but is not running. Check the credentials and service logs.`,
  connectionNotFound: 'Channel connection not found',
  connected: (display: string) => `${display} connected to DeerFlow.`,
  // Platforms that bind through a link (Telegram) speak of the link, the others of the code.
  invalidCode: (display: string, mode: ConnectOffer['mode']) => `${display} connection ${mode === 'deep_link' ? 'link' : 'code'} is invalid or expired.`,
  notCompleted: (display: string) => `${display} connection could not be completed from this message.`,
  tooManyAttempts: 'Too many connection attempts from this account. Wait a minute, then send the newest code from the DeerFlow console.',
  tooManyAttemptsOnProvider: 'Too many connection attempts right now. Wait a minute, then send the newest code from the DeerFlow console.',
} as const;

const FAILED_ATTEMPTS_WINDOW_MS = 60_000;

/**
 * Binding chat identities to server accounts (reference §8): codes minted for the console,
 * consumed once from a chat, connections listed and revoked, and the lookup the identity gate
 * uses. Platform differences come from the `ChannelDefinition`s.
 */
export class ChannelConnections implements ChatBinder {
  private readonly codes: ConnectCodesRepo;
  private readonly connections: ConnectionsRepo;
  private readonly now: () => Date;

  constructor(private readonly options: ChannelConnectionsOptions) {
    this.codes = new ConnectCodesRepo(options.db);
    this.connections = new ConnectionsRepo(options.db);
    this.now = options.now ?? (() => new Date());
  }

  get isEnabled(): boolean {
    return this.options.config.enabled;
  }

  /** Whether people may bind `provider` identities (connections on, and the platform's block enabled). */
  offersBinding(provider: string): boolean {
    return this.isEnabled && this.providerConfig(provider)?.enabled === true;
  }

  /** Whether unbound senders are turned away (`enabled` and `require_bound_identity`). */
  get requiresBoundIdentity(): boolean {
    return this.options.config.enabled && this.options.config.require_bound_identity;
  }

  /** Platforms enabled under `channel_connections`, with the owner's connection status. */
  async providers(ownerUserId: string): Promise<ProviderInfo[]> {
    if (!this.isEnabled) return [];
    const rows = await this.connections.listForOwner(ownerUserId);
    return this.options.platforms.flatMap((platform) => {
      const connection = this.providerConfig(platform.name);
      if (!connection?.enabled) return [];
      const missing = platform.binding?.missing?.(connection);
      const reason = missing ?? (this.options.isRunning(platform.name) ? null : TEXT.notRunning(platform.displayName));
      const newest = rows.find((row) => row.provider === platform.name);
      return [
        {
          provider: platform.name,
          display_name: platform.displayName,
          enabled: true,
          configured: missing === undefined,
          connectable: reason === null,
          unavailable_reason: reason,
          auth_mode: modeOf(platform),
          connection_status: newest?.status ?? 'not_connected',
        },
      ];
    });
  }

  /**
   * A fresh one-time code for `provider` (reference §8.1).
   *
   * @throws AppError 400 when connections or the provider are off or not usable, 404 for an
   *   unknown provider, 429 at the pending-code cap.
   */
  async connect(ownerUserId: string, provider: string): Promise<ConnectResponse> {
    if (!this.isEnabled) throw badRequest(TEXT.disabled);
    const platform = this.options.platforms.find((p) => p.name === provider);
    if (!platform) throw new AppError('NOT_FOUND', 'unknown channel provider', { status: 404, userMessage: TEXT.unknownProvider });
    const connection = this.providerConfig(provider);
    if (!connection?.enabled) throw badRequest(TEXT.providerDisabled);
    const missing = platform.binding?.missing?.(connection);
    if (missing !== undefined) throw badRequest(missing);
    if (!this.options.isRunning(provider)) throw badRequest(TEXT.notRunning(platform.displayName));
    const ttlSeconds = this.options.config.code_ttl_seconds;
    const { code } = await this.codes.mint({
      ownerUserId,
      provider,
      ttlMs: ttlSeconds * 1000,
      maxPending: this.options.config.max_pending_codes,
      now: this.now(),
    });
    const offer = platform.binding?.offer(code, connection) ?? {
      mode: 'binding_code' as const,
      url: null,
      instruction: `Send /connect ${code} to the DeerFlow ${platform.displayName} bot.`,
    };
    return { provider, code, expires_in: ttlSeconds, ...offer };
  }

  async list(ownerUserId: string): Promise<ConnectionInfo[]> {
    if (!this.isEnabled) return [];
    return (await this.connections.listForOwner(ownerUserId)).map(toConnectionInfo);
  }

  /** @throws AppError 400 when disabled; NotFoundError for unknown ids and other owners' ids alike. */
  async disconnect(connectionId: string, ownerUserId: string): Promise<void> {
    if (!this.isEnabled) throw badRequest(TEXT.disabled);
    if (!(await this.connections.disconnect(connectionId, ownerUserId))) {
      throw new AppError('NOT_FOUND', 'channel connection not found', { status: 404, userMessage: TEXT.connectionNotFound });
    }
  }

  /** The connected binding of a chat identity, with its owner's shell grant, for the identity gate. */
  findBinding(provider: string, identity: ChatIdentity): Promise<ActiveConnection | undefined> {
    return this.connections.findActive({ provider, externalAccountId: identity.externalAccountId, workspaceId: identity.workspaceId ?? '' });
  }

  /**
   * In chat (reference §5.3): a sender past `max_failed_codes_per_minute` wrong codes, or any
   * sender while the platform is past `max_failed_codes_per_provider_per_minute`, is refused
   * without the code being read; otherwise the code is consumed once and the identity bound to
   * its owner, taking it over from any previous owner. Every refused attempt is an audit event.
   * The code never reaches a log or the database.
   */
  async bind(provider: string, request: ChatBindRequest): Promise<string> {
    const platform = this.options.platforms.find((p) => p.name === provider);
    const display = platform?.displayName ?? provider;
    const identity = { provider, externalAccountId: request.identity.externalAccountId, workspaceId: request.identity.workspaceId ?? '' };
    const log = this.options.logger.child({ provider, externalAccountId: identity.externalAccountId });
    try {
      const refusal = await this.overLimit(identity);
      if (refusal !== undefined) {
        await this.connections.recordRejectedCode(identity, refusal.kind);
        log.warn({ event: refusal.kind }, 'connect code refused unread: too many wrong codes');
        return refusal.text;
      }
      const owner = this.isEnabled ? await this.codes.consume({ provider, code: request.code, now: this.now() }) : undefined;
      if (owner === undefined) {
        await this.connections.recordRejectedCode(identity);
        log.info('connect code rejected');
        return TEXT.invalidCode(display, modeOf(platform));
      }
      const { connection, previousOwnerIds } = await this.connections.bind({
        ownerUserId: owner,
        identity,
        ...(request.accountName === undefined ? {} : { externalAccountName: request.accountName }),
        ...(request.workspaceName === undefined ? {} : { workspaceName: request.workspaceName }),
        ...(request.metadata === undefined ? {} : { metadata: request.metadata }),
      });
      log.info({ connectionId: connection.id, ownerUserId: owner, tookOverFrom: previousOwnerIds.length }, 'chat identity bound');
      return TEXT.connected(display);
    } catch (error) {
      log.error({ err: describeError(error) }, 'connect code could not be processed');
      return TEXT.notCompleted(display);
    }
  }

  /** The audit trail for the operator: newest first, `limit` events before the `beforeSeq` cursor. */
  async auditTrail(page: { limit: number; beforeSeq?: number }): Promise<ConnectionEvent[]> {
    return this.connections.eventPage(page);
  }

  /** Which limit, if any, refuses this sender's next code unread; the sender's own is checked first. */
  private async overLimit(identity: { provider: string; externalAccountId: string }): Promise<{ kind: CodeRefusalKind; text: string } | undefined> {
    const since = new Date(this.now().getTime() - FAILED_ATTEMPTS_WINDOW_MS);
    const failures = await this.connections.countRejectedCodes({ ...identity, since });
    const { max_failed_codes_per_minute: perAccount, max_failed_codes_per_provider_per_minute: perProvider } = this.options.config;
    if (failures.account >= perAccount) return { kind: 'code_refused_account_limit', text: TEXT.tooManyAttempts };
    if (failures.provider >= perProvider) return { kind: 'code_refused_provider_limit', text: TEXT.tooManyAttemptsOnProvider };
    return undefined;
  }

  private providerConfig(provider: string): ProviderConnectionConfig | undefined {
    return (this.options.config as Record<string, unknown>)[provider] as ProviderConnectionConfig | undefined;
  }
}

/** Links or codes: how people bind this platform. */
function modeOf(platform: ChannelDefinition | undefined): ConnectOffer['mode'] {
  return platform?.binding?.mode ?? 'binding_code';
}

function badRequest(message: string): AppError {
  return new AppError('BAD_REQUEST', message, { status: 400, userMessage: message });
}

function toConnectionInfo(row: ConnectionRecord): ConnectionInfo {
  return {
    id: row.id,
    provider: row.provider,
    status: row.status,
    external_account_id: row.externalAccountId,
    external_account_name: row.externalAccountName,
    workspace_id: row.workspaceId === '' ? null : row.workspaceId,
    workspace_name: row.workspaceName,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

