import { wechatChannel } from '../../channels/wechat/index.js';
import type { FakeWeChat } from '../fakes/wechat/index.js';

/**
 * The WeChat channel's config pointed at `fake` (its token, iLink and CDN addresses), polling with
 * short timeouts as a test wants, `overrides` on top.
 */
export function weChatTestConfig(fake: FakeWeChat, overrides: Record<string, unknown> = {}) {
  return wechatChannel.configSchema.parse({
    enabled: true,
    bot_token: fake.token,
    base_url: fake.baseUrl,
    cdn_base_url: fake.cdnBaseUrl,
    polling_timeout: 0.2,
    polling_retry_delay: 0.05,
    ...overrides,
  });
}
