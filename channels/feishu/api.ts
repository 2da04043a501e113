import * as lark from '@larksuiteoapi/node-sdk';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { isTokenInvalid, rejected, toChannelError } from './errors.js';
import type { AppBudget } from './budget.js';
import { renderCard, renderStreamingCard, STREAM_ELEMENT_ID } from './render.js';

/** Feishu's answer envelope. */
interface Envelope<T> {
  code?: number;
  msg?: string;
  data?: T;
}

type CacheKey = Parameters<lark.Cache['get']>[0];

/**
 * The SDK's token cache, per adapter: the SDK's default is process-global and keyed by appId
 * (sdk-recipes §4), so two adapters (or tests) would share tokens; and we must be able to forget
 * a token the platform calls expired.
 */
class TokenCache implements lark.Cache {
  private readonly entries = new Map<string, { value: unknown; expiresAt: number }>();

  async set(key: CacheKey, value: unknown, expire?: number, options?: { namespace?: string }): Promise<boolean> {
    this.entries.set(`${options?.namespace ?? ''}:${String(key)}`, { value, expiresAt: expire ?? Number.POSITIVE_INFINITY });
    return true;
  }

  async get(key: CacheKey, options?: { namespace?: string }): Promise<unknown> {
    const entry = this.entries.get(`${options?.namespace ?? ''}:${String(key)}`);
    if (entry === undefined || entry.expiresAt <= Date.now()) return undefined;
    return entry.value;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** SDK log lines go to debug, first string argument only (the SDK logs payloads and errors with headers). */
export function sdkLogger(logger: Logger): lark.Logger {
  const log = (...args: unknown[]): void => {
    const first = args.find((a) => typeof a === 'string' || (Array.isArray(a) && typeof a[0] === 'string'));
    const text = Array.isArray(first) ? first.filter((a) => typeof a === 'string').join(' ') : first;
    logger.debug({ sdk: 'lark' }, typeof text === 'string' ? text.slice(0, 200) : 'lark sdk log');
  };
  return { error: log, warn: log, info: log, debug: log, trace: () => undefined };
}

export interface FeishuApiOptions {
  appId: string;
  appSecret: string;
  domain: string;
  logger: Logger;
  /** Every call waits for its method's share of the app's frequency limits; absent = no waiting. */
  budget?: AppBudget;
}

export type ResourceType = 'image' | 'file';

/**
 * The Feishu open API calls the adapter makes, through the SDK's `Client` (it fetches and caches
 * the tenant token). Every call: an answer with `code !== 0` or a thrown axios error becomes a
 * `ChannelError`; an expired token (99991663 and friends) is forgotten and the call tried once
 * more with a fresh one. Each attempt first waits for its method's place in the app's budget.
 */
export class FeishuApi {
  readonly client: lark.Client;
  private readonly cache = new TokenCache();

  constructor(private readonly options: FeishuApiOptions) {
    this.client = new lark.Client({
      appId: options.appId,
      appSecret: options.appSecret,
      domain: options.domain,
      cache: this.cache,
      loggerLevel: lark.LoggerLevel.error,
      logger: sdkLogger(options.logger),
    });
  }

  /** Fetches a tenant token; rejects with `CHANNEL_UNAUTHORIZED` when Feishu refuses the app's credentials. */
  async verifyCredentials(): Promise<void> {
    // Asked directly: the SDK's token call would go through its own token machinery and lose Feishu's code.
    let answer: { code?: number; tenant_access_token?: unknown };
    let status: number;
    try {
      const response = await fetch(`${this.options.domain}/open-apis/auth/v3/tenant_access_token/internal`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ app_id: this.options.appId, app_secret: this.options.appSecret }),
        signal: AbortSignal.timeout(15_000),
      });
      status = response.status;
      answer = (await response.json().catch(() => ({}))) as typeof answer;
    } catch (error) {
      throw new ChannelError('feishu', 'CHANNEL_UNAVAILABLE', 'Feishu unreachable (tenant_access_token)', { status: 502, cause: error });
    }
    // An overloaded or limiting gateway says nothing about the credentials: worth trying again.
    if (status >= 500 || status === 429) {
      throw new ChannelError('feishu', 'CHANNEL_UNAVAILABLE', `Feishu unavailable (tenant_access_token: HTTP ${status})`, { status: 502 });
    }
    if (answer.code !== 0 || typeof answer.tenant_access_token !== 'string') {
      throw new ChannelError('feishu', 'CHANNEL_UNAUTHORIZED', `Feishu refused the app credentials (code ${answer.code})`, {
        status: 502,
        cause: { feishuCode: answer.code },
      });
    }
  }

  /** The bot's open_id (`GET /open-apis/bot/v3/info`), to tell its own mentions and messages apart. */
  async botOpenId(): Promise<string | undefined> {
    const answer = (await this.withFreshToken('bot.info', () => this.client.request({ method: 'GET', url: '/open-apis/bot/v3/info' }))) as { code?: number; bot?: { open_id?: string } };
    if (answer.code !== 0) throw rejected('bot.info', answer.code ?? -1);
    return answer.bot?.open_id;
  }

  /** Replies to `messageId` with an interactive card showing `markdown`; resolves with the card's message id. */
  async replyCard(messageId: string, markdown: string): Promise<string> {
    const data = await this.call<{ message_id?: string }>('im.message.reply', {
      method: 'POST',
      url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}/reply`,
      data: { msg_type: 'interactive', content: renderCard(markdown) },
    });
    return requireId(data?.message_id, 'im.message.reply');
  }

  /** Posts an interactive card into `chatId`; resolves with its message id. */
  async createCard(chatId: string, markdown: string): Promise<string> {
    return this.createMessage(chatId, 'interactive', renderCard(markdown));
  }

  /** Replies with plain text (connect answers). */
  async replyText(messageId: string, text: string): Promise<string> {
    const data = await this.call<{ message_id?: string }>('im.message.reply', {
      method: 'POST',
      url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}/reply`,
      data: { msg_type: 'text', content: JSON.stringify({ text }) },
    });
    return requireId(data?.message_id, 'im.message.reply');
  }

  async createMessage(chatId: string, msgType: string, content: string): Promise<string> {
    const data = await this.call<{ message_id?: string }>('im.message.create', {
      method: 'POST',
      url: '/open-apis/im/v1/messages',
      params: { receive_id_type: 'chat_id' },
      data: { receive_id: chatId, msg_type: msgType, content },
    });
    return requireId(data?.message_id, 'im.message.create');
  }

  async replyMessage(messageId: string, msgType: string, content: string): Promise<string> {
    const data = await this.call<{ message_id?: string }>('im.message.reply', {
      method: 'POST',
      url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}/reply`,
      data: { msg_type: msgType, content },
    });
    return requireId(data?.message_id, 'im.message.reply');
  }

  /** Creates a CardKit card entity in streaming mode showing `markdown`; resolves with its card_id. */
  async createStreamingCard(markdown: string): Promise<string> {
    const data = await this.call<{ card_id?: string }>('cardkit.card.create', {
      method: 'POST',
      url: '/open-apis/cardkit/v1/cards',
      data: { type: 'card_json', data: renderStreamingCard(markdown) },
    });
    return requireId(data?.card_id, 'cardkit.card.create');
  }

  /** Replies to `messageId` with the card entity `cardId`; resolves with the message id. */
  async replyCardEntity(messageId: string, cardId: string): Promise<string> {
    return this.replyMessage(messageId, 'interactive', JSON.stringify({ type: 'card', data: { card_id: cardId } }));
  }

  /** Streams the full text into the card's element; `sequence` must grow with every call on the card. */
  async streamCardContent(cardId: string, markdown: string, sequence: number): Promise<void> {
    await this.call('cardkit.cardElement.content', {
      method: 'PUT',
      url: `/open-apis/cardkit/v1/cards/${encodeURIComponent(cardId)}/elements/${STREAM_ELEMENT_ID}/content`,
      data: { content: markdown, sequence },
    });
  }

  /** Turns streaming mode off (else the chat list keeps showing "generating"). */
  async closeStreamingCard(cardId: string, sequence: number): Promise<void> {
    await this.call('cardkit.card.settings', {
      method: 'PATCH',
      url: `/open-apis/cardkit/v1/cards/${encodeURIComponent(cardId)}/settings`,
      data: { settings: JSON.stringify({ config: { streaming_mode: false } }), sequence },
    });
  }

  /** Replaces the card of message `messageId` (sent with `update_multi: true`). */
  async patchCard(messageId: string, markdown: string): Promise<void> {
    await this.call('im.message.patch', {
      method: 'PATCH',
      url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}`,
      data: { content: renderCard(markdown) },
    });
  }

  async addReaction(messageId: string, emojiType: string): Promise<void> {
    await this.call('im.messageReaction.create', {
      method: 'POST',
      url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}/reactions`,
      data: { reaction_type: { emoji_type: emojiType } },
    });
  }

  /** The bytes of a message resource (an image or file someone sent). */
  async downloadResource(messageId: string, fileKey: string, type: ResourceType, signal?: AbortSignal): Promise<Uint8Array> {
    const bytes = await this.withFreshToken('im.messageResource.get', () =>
      this.client.request<ArrayBuffer>({
        method: 'GET',
        url: `/open-apis/im/v1/messages/${encodeURIComponent(messageId)}/resources/${encodeURIComponent(fileKey)}`,
        params: { type },
        responseType: 'arraybuffer',
        ...(signal === undefined ? {} : { signal }),
      }),
    );
    return new Uint8Array(bytes as ArrayBuffer);
  }

  async uploadImage(bytes: Buffer): Promise<string> {
    const answer = await this.withFreshToken('im.image.create', () => this.client.im.image.create({ data: { image_type: 'message', image: bytes } }));
    const key = (answer as { image_key?: string } | null)?.image_key;
    return requireId(key, 'im.image.create');
  }

  async uploadFile(bytes: Buffer, fileName: string, fileType: 'opus' | 'mp4' | 'pdf' | 'doc' | 'xls' | 'ppt' | 'stream'): Promise<string> {
    const answer = await this.withFreshToken('im.file.create', () =>
      this.client.im.file.create({ data: { file_type: fileType, file_name: fileName, file: bytes } }),
    );
    const key = (answer as { file_key?: string } | null)?.file_key;
    return requireId(key, 'im.file.create');
  }

  private async call<T>(method: string, payload: { method: string; url: string; params?: Record<string, string>; data?: unknown }): Promise<T | undefined> {
    const answer = await this.withFreshToken(method, () => this.client.request<Envelope<T>>(payload));
    const envelope = answer as Envelope<T>;
    if (envelope.code !== 0) throw rejected(method, envelope.code ?? -1);
    return envelope.data;
  }

  /** Runs `request`; when Feishu calls the token invalid, forgets it and runs it once more. */
  private async withFreshToken<T>(method: string, call: () => Promise<T>): Promise<T> {
    const { budget } = this.options;
    const request = budget === undefined ? call : () => budget.run(method, call);
    try {
      return await request();
    } catch (error) {
      if (!isTokenInvalid(error)) throw toChannelError(error, method);
      this.options.logger.info({ method }, 'Feishu token expired; refreshing');
      this.cache.clear();
      try {
        return await request();
      } catch (retryError) {
        throw toChannelError(retryError, method);
      }
    }
  }
}

function requireId(id: string | undefined, method: string): string {
  if (typeof id === 'string' && id.length > 0) return id;
  throw new ChannelError('feishu', 'CHANNEL_REJECTED', `Feishu ${method} answered without an id`, { status: 502 });
}

