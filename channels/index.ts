import type { ChannelDefinition } from '../src/channel/types.js';
import { dingtalkChannel } from './dingtalk/index.js';
import { discordChannel } from './discord/index.js';
import { feishuChannel } from './feishu/index.js';
import { githubChannel } from './github/index.js';
import { slackChannel } from './slack/index.js';
import { telegramChannel } from './telegram/index.js';
import { webChannel } from './web/index.js';
import { wechatChannel } from './wechat/index.js';
import { wecomChannel } from './wecom/index.js';

/** Every platform this build supports. A new platform is one folder plus one line here. */
export const platforms: readonly ChannelDefinition[] = [
  telegramChannel as ChannelDefinition,
  slackChannel as ChannelDefinition,
  discordChannel as ChannelDefinition,
  feishuChannel as ChannelDefinition,
  dingtalkChannel as ChannelDefinition,
  githubChannel as ChannelDefinition,
  webChannel as ChannelDefinition,
  wechatChannel as ChannelDefinition,
  wecomChannel as ChannelDefinition,
];
