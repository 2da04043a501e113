import { randomUUID } from 'node:crypto';
import type { ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import { type IlinkClient, refusalCode, refusalError } from './api.js';
import type { ContextTokens } from './context-tokens.js';
import { ITEM_TYPE, MESSAGE_TYPE, sendMessageResponseSchema } from './schemas.js';

/** `message_state` of a complete message (`MessageState.FINISH` in the package). */
const FINISHED = 2;

/** One `item_list` entry we send. */
export type OutboundItem =
  | { type: typeof ITEM_TYPE.text; text_item: { text: string } }
  | { type: typeof ITEM_TYPE.image; image_item: Record<string, unknown> }
  | { type: typeof ITEM_TYPE.file; file_item: Record<string, unknown> };

/**
 * Sends bot messages with `ilink/bot/sendmessage`, one item each, echoing the conversation's
 * `context_token`. Rejects with `ChannelError`: `CHANNEL_REJECTED` when no token is known for the
 * chat (iLink cannot deliver without one) or iLink answered a non-zero `ret`.
 */
export class WeChatSender {
  constructor(
    private readonly client: IlinkClient,
    private readonly contextTokens: ContextTokens,
  ) {}

  /** Sends `text`; resolves with the message's id (the server's, else our `client_id`). */
  text(target: ReplyTarget, text: string): Promise<string> {
    return this.item(target, { type: ITEM_TYPE.text, text_item: { text } });
  }

  async item(target: ReplyTarget, item: OutboundItem): Promise<string> {
    const contextToken = await this.contextTokens.forTarget(target);
    if (contextToken === undefined) {
      throw new ChannelError('wechat', 'CHANNEL_REJECTED', 'WeChat reply has no context_token: the person has not written since the tokens were lost');
    }
    const clientId = `deerflow-${randomUUID()}`;
    const answer = await this.client.post(
      'sendmessage',
      {
        msg: {
          from_user_id: '',
          to_user_id: target.chatId,
          client_id: clientId,
          message_type: MESSAGE_TYPE.bot,
          message_state: FINISHED,
          item_list: [item],
          context_token: contextToken,
        },
      },
      sendMessageResponseSchema,
    );
    const code = refusalCode(answer);
    if (code !== 0) throw refusalError(code, 'sendmessage');
    return answer.message_id ?? clientId;
  }
}
