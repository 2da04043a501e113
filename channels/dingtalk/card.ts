import { randomUUID } from 'node:crypto';
import type { ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { DingTalkApi } from './api.js';

/**
 * AI cards (platform-limits §5.5): one created per reply with `createAndDeliver`, then its
 * `content` variable replaced with `PUT /v1.0/card/streaming` (full text each time). Rejects
 * with `ChannelError` (business errors included).
 */
export class CardApi {
  private sequence = 0;

  constructor(
    private readonly api: DingTalkApi,
    private readonly templateId: string,
  ) {}

  /**
   * Creates and delivers a card showing `content`; resolves with its `outTrackId`. The id starts
   * with the answered message id, so logs and the fake can tell which message it answers.
   */
  async create(target: ReplyTarget, content: string): Promise<string> {
    const outTrackId = `${target.replyTo.messageId ?? 'msg'}.${Date.now().toString(36)}${(this.sequence++).toString(36)}`;
    const robotCode = this.api.robotCode;
    const space = target.isPrivateChat
      ? { openSpaceId: `dtv1.card//IM_ROBOT.${target.chatId}`, imRobotOpenDeliverModel: { spaceType: 'IM_ROBOT' }, imRobotOpenSpaceModel: { supportForward: true } }
      : { openSpaceId: `dtv1.card//IM_GROUP.${target.chatId}`, imGroupOpenDeliverModel: { robotCode }, imGroupOpenSpaceModel: { supportForward: true } };
    const answer = await this.api.call<{ success?: boolean; result?: unknown }>('POST', '/v1.0/card/instances/createAndDeliver', {
      cardTemplateId: this.templateId,
      outTrackId,
      cardData: { cardParamMap: { content } },
      callbackType: 'STREAM',
      ...space,
    });
    if (answer.success === false) throw new ChannelError('dingtalk', 'CHANNEL_REJECTED', 'DingTalk card createAndDeliver was not successful', { status: 502 });
    return outTrackId;
  }

  /** Replaces the card's content with `content`; `isFinal` closes the stream. */
  async stream(outTrackId: string, content: string, isFinal: boolean): Promise<void> {
    await this.api.call('PUT', '/v1.0/card/streaming', {
      outTrackId,
      guid: randomUUID(),
      key: 'content',
      content,
      isFull: true,
      isFinalize: isFinal,
      isError: false,
    });
  }
}
