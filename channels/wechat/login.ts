import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { sleep } from '../../src/time.js';
import type { IlinkClient } from './api.js';
import { qrCodeResponseSchema, qrStatusResponseSchema } from './schemas.js';
import { WECHAT_TEXTS } from './texts.js';

/** The login kept between starts, in `state_dir/wechat-auth.json` (mode 0600: it holds the bot token). */
const authStateSchema = z.object({ bot_token: z.string().min(1), ilink_bot_id: z.string().optional(), base_url: z.string().optional() });
type AuthState = z.output<typeof authStateSchema>;

export const AUTH_FILE = 'wechat-auth.json';
/** Owner read/write only. */
const PRIVATE_MODE = 0o600;
/** A QR code that expires is replaced this many times before the login gives up (the package: 3). */
const MAX_QR_CODES = 3;
/** Client timeout of one `get_qrcode_status` long poll (the package: 35 s). */
const STATUS_TIMEOUT_MS = 35_000;

export interface QrLoginOptions {
  client: IlinkClient;
  stateDir: string;
  botType: number;
  pollIntervalMs: number;
  timeoutMs: number;
  logger: Logger;
  now: () => number;
}

/**
 * The QR-code login (reference §6.6, issue #5574): the token kept from an earlier login, else a
 * new QR code whose link is logged for the operator to open in WeChat, polled until confirmed.
 * The confirmed token is written to `state_dir/wechat-auth.json` with mode 0600 (a looser file
 * left from before is tightened), and never logged.
 */
export class QrLogin {
  constructor(private readonly options: QrLoginOptions) {}

  private get authPath(): string {
    return join(this.options.stateDir, AUTH_FILE);
  }

  /**
   * Gives the client a token: the stored one, or one from a confirmed QR login.
   *
   * @throws ChannelError `CHANNEL_UNAUTHORIZED` when the login was not confirmed in time or the
   * QR codes ran out.
   */
  async login(signal: AbortSignal): Promise<void> {
    const { client, logger } = this.options;
    const stored = await this.load();
    if (stored) {
      client.setToken(stored.bot_token);
      if (stored.base_url) client.setBaseUrl(stored.base_url);
      logger.info('WeChat login restored from state_dir');
      return;
    }
    const confirmed = await this.scan(signal);
    await this.save(confirmed);
    client.setToken(confirmed.bot_token);
    if (confirmed.base_url) client.setBaseUrl(confirmed.base_url);
    logger.info({ bot: confirmed.ilink_bot_id }, 'WeChat QR-code login confirmed');
  }

  /** Forgets the stored login (its session expired), so the next start asks for a new QR scan. */
  async forget(): Promise<void> {
    await rm(this.authPath, { force: true });
  }

  private async scan(signal: AbortSignal): Promise<AuthState> {
    const { client, logger, now, timeoutMs, pollIntervalMs } = this.options;
    const deadline = now() + timeoutMs;
    let statusClient = client;
    for (let codes = 1; codes <= MAX_QR_CODES; codes++) {
      const qr = await client.post(`get_bot_qrcode?bot_type=${this.options.botType}`, { local_token_list: [] }, qrCodeResponseSchema, { signal });
      // The operator opens this link in WeChat (or renders it as a QR code) and confirms on the phone.
      logger.info({ qrcodeUrl: qr.qrcode_img_content ?? qr.qrcode }, 'WeChat QR-code login: open this link in WeChat and confirm');
      while (now() < deadline) {
        const answer = await statusClient
          .get('get_qrcode_status', { qrcode: qr.qrcode }, qrStatusResponseSchema, { signal, timeoutMs: Math.min(STATUS_TIMEOUT_MS, Math.max(1, deadline - now())) })
          .catch((error: unknown) => {
            if (signal.aborted) throw error;
            // A long poll that timed out or a gateway error: keep waiting, as the package does.
            logger.debug({ err: describeError(error) }, 'WeChat QR status check failed; retrying');
            return { status: 'wait' } as z.output<typeof qrStatusResponseSchema>;
          });
        if (answer.status === 'confirmed' && answer.bot_token) {
          return { bot_token: answer.bot_token, ...(answer.ilink_bot_id ? { ilink_bot_id: answer.ilink_bot_id } : {}), ...(answer.baseurl ? { base_url: answer.baseurl } : {}) };
        }
        if (answer.status === 'expired') break;
        if (answer.status === 'scaned_but_redirect' && answer.redirect_host) {
          statusClient = client.withBaseUrl(`https://${answer.redirect_host}`);
        }
        await sleep(pollIntervalMs, signal);
      }
      if (now() >= deadline) break;
    }
    throw new ChannelError('wechat', 'CHANNEL_UNAUTHORIZED', `${WECHAT_TEXTS.loginFailed}: not confirmed in time`, { status: 502 });
  }

  private async load(): Promise<AuthState | undefined> {
    let text: string;
    try {
      text = await readFile(this.authPath, 'utf8');
    } catch {
      return undefined;
    }
    await this.tighten();
    try {
      const checked = authStateSchema.safeParse(JSON.parse(text));
      return checked.success ? checked.data : undefined;
    } catch {
      this.options.logger.warn('WeChat auth state is not JSON; logging in again');
      return undefined;
    }
  }

  /** Writes the login atomically with mode 0600 (a temporary file in the same folder, then a rename). */
  private async save(state: AuthState): Promise<void> {
    await mkdir(this.options.stateDir, { recursive: true });
    const temporary = `${this.authPath}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(state), { mode: PRIVATE_MODE });
    // The umask may have loosened nothing, but a file that existed under this name keeps its mode.
    await chmod(temporary, PRIVATE_MODE);
    await rename(temporary, this.authPath);
  }

  /** A stored login readable by others (copied in by hand, an older version) is made private. */
  private async tighten(): Promise<void> {
    try {
      const { mode } = await stat(this.authPath);
      if ((mode & 0o077) !== 0) await chmod(this.authPath, PRIVATE_MODE);
    } catch (error) {
      this.options.logger.warn({ err: describeError(error) }, 'WeChat auth state permissions not tightened');
    }
  }
}
