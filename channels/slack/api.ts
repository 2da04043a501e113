import type { webApi } from '@slack/bolt';
import { toChannelError } from './errors.js';

type WebClient = webApi.WebClient;

/**
 * The Web API calls the adapter makes, typed and with errors already translated: every method
 * rejects with a `ChannelError` (see `toChannelError`). Thin by design, like grammY's `Api`.
 */
export class SlackApi {
  constructor(readonly client: WebClient) {}

  /** Resolves with the workspace and our bot's ids, and the bot's name. */
  async authTest(): Promise<{ teamId: string; botUserId: string; botId: string | undefined; botName: string | undefined }> {
    const result = await this.call('auth.test', () => this.client.auth.test());
    return { teamId: String(result.team_id ?? ''), botUserId: String(result.user_id ?? ''), botId: result.bot_id, botName: result.user || undefined };
  }

  /**
   * users.info: the member's name as Slack shows it in a mention (display name, else real name,
   * else handle); undefined when the profile has none. Needs the `users:read` scope.
   */
  async userName(userId: string): Promise<string | undefined> {
    const result = await this.call('users.info', () => this.client.users.info({ user: userId }));
    const user = result.user;
    return user?.profile?.display_name || user?.profile?.real_name || user?.real_name || user?.name || undefined;
  }

  /** conversations.info: the channel's name; undefined for a DM. Needs `channels:read` (`groups:read` for private channels). */
  async channelName(channelId: string): Promise<string | undefined> {
    const result = await this.call('conversations.info', () => this.client.conversations.info({ channel: channelId }));
    return result.channel?.name || undefined;
  }

  /** chat.postMessage of mrkdwn `text`, in the thread `threadTs` when given; resolves with the new ts. */
  async postMessage(channel: string, text: string, threadTs?: string): Promise<string> {
    const result = await this.call('chat.postMessage', () =>
      this.client.chat.postMessage({ channel, text, ...(threadTs === undefined ? {} : { thread_ts: threadTs }) }),
    );
    return String(result.ts);
  }

  async updateMessage(channel: string, ts: string, text: string): Promise<void> {
    await this.call('chat.update', () => this.client.chat.update({ channel, ts, text }));
  }

  async deleteMessage(channel: string, ts: string): Promise<void> {
    await this.call('chat.delete', () => this.client.chat.delete({ channel, ts }));
  }

  async addReaction(channel: string, ts: string, name: string): Promise<void> {
    await this.call('reactions.add', () => this.client.reactions.add({ channel, timestamp: ts, name }));
  }

  /** chat.startStream in a thread with the first `markdown`, addressed to `recipient`; resolves with the stream message's ts. */
  async startStream(input: { channel: string; threadTs: string; markdown: string; recipient?: { userId: string; teamId?: string } }): Promise<string> {
    const recipient = input.recipient;
    const result = await this.call('chat.startStream', () =>
      this.client.chat.startStream({
        channel: input.channel,
        thread_ts: input.threadTs,
        markdown_text: input.markdown,
        // Required in channels (Slack streams to one person there); harmless in DMs.
        ...(recipient === undefined ? {} : { recipient_user_id: recipient.userId }),
        ...(recipient?.teamId === undefined ? {} : { recipient_team_id: recipient.teamId }),
      }),
    );
    return String(result.ts);
  }

  async appendStream(channel: string, ts: string, markdown: string): Promise<void> {
    await this.call('chat.appendStream', () => this.client.chat.appendStream({ channel, ts, markdown_text: markdown }));
  }

  async stopStream(channel: string, ts: string): Promise<void> {
    await this.call('chat.stopStream', () => this.client.chat.stopStream({ channel, ts }));
  }

  private async call<T>(method: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw toChannelError(error, method);
    }
  }
}
