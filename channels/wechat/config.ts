import { z } from 'zod';
import { WECHAT_LIMITS } from './limits.js';

/** File extensions a person may send (reference §6.6: text, documents and code); images are checked by type instead. */
export const DEFAULT_ALLOWED_FILE_EXTENSIONS = [
  'txt', 'md', 'markdown', 'csv', 'tsv', 'json', 'jsonl', 'yaml', 'yml', 'xml', 'html', 'htm', 'log', 'ini', 'toml',
  'pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'rtf', 'odt', 'ods', 'odp',
  'py', 'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'java', 'kt', 'go', 'rs', 'c', 'h', 'cc', 'cpp', 'hpp', 'cs', 'rb', 'php',
  'swift', 'scala', 'sh', 'bash', 'zsh', 'sql', 'r', 'lua', 'pl', 'css', 'scss', 'vue', 'svelte', 'ipynb', 'zip',
] as const;

const seconds = (what: string) => z.number().positive(`must be a positive number of seconds (${what})`).refine(Number.isFinite, 'must be finite');

/** `channels.wechat` of config.yaml (reference §6.6, §10.2). */
export const wechatConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe('Run the WeChat channel (iLink bot API, long polling).'),
    bot_token: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('iLink bot token (from the QR-code login); required when enabled unless qrcode_login_enabled. Never logged.'),
    qrcode_login_enabled: z
      .boolean()
      .default(false)
      .describe('Without bot_token, log in by QR code at start: the QR link is logged, the token kept in state_dir/wechat-auth.json (mode 0600).'),
    state_dir: z
      .string()
      .min(1)
      .optional()
      .describe('Folder for the QR login state (wechat-auth.json, 0600); required with qrcode_login_enabled. Cursor and context tokens live in the database.'),
    base_url: z
      .url()
      .default('https://ilinkai.weixin.qq.com')
      .transform((url) => url.replace(/\/+$/, ''))
      .describe('iLink API root; a trailing slash is removed.'),
    cdn_base_url: z
      .url()
      .default('https://novac2c.cdn.weixin.qq.com/c2c')
      .transform((url) => url.replace(/\/+$/, ''))
      .describe('WeChat CDN root for encrypted media; a trailing slash is removed.'),
    channel_version: z.string().min(1).default('1.0').describe('base_info.channel_version sent with every request.'),
    ilink_app_id: z.string().default('bot').describe('iLink-App-Id header.'),
    route_tag: z.string().optional().describe('SKRouteTag header, when Tencent gave you one.'),
    allowed_users: z
      .array(z.string().trim().min(1, 'must be an iLink user id, e.g. o9cq80_abc@im.wechat'))
      .default([])
      .describe('iLink user ids (from_user_id) allowed to talk to the bot; empty allows everyone.'),
    polling_timeout: seconds('polling_timeout')
      .default(35)
      .describe('Long-poll hold of one getupdates, in seconds; the server may ask for another (respect_server_longpoll_timeout).'),
    polling_retry_delay: seconds('polling_retry_delay').default(5).describe('Wait after a failed getupdates, in seconds.'),
    respect_server_longpoll_timeout: z.boolean().default(true).describe("Use the server's longpolling_timeout_ms for the next poll."),
    qrcode_poll_interval: seconds('qrcode_poll_interval').default(2).describe('Wait between QR status checks, in seconds.'),
    qrcode_poll_timeout: seconds('qrcode_poll_timeout').default(180).describe('Give up a QR login after this many seconds.'),
    qrcode_bot_type: z.number().int().positive().default(3).describe('bot_type of get_bot_qrcode.'),
    max_inbound_image_bytes: z.number().int().positive().default(WECHAT_LIMITS.maxInboundImageBytes),
    max_outbound_image_bytes: z.number().int().positive().default(WECHAT_LIMITS.maxOutboundImageBytes),
    max_inbound_file_bytes: z.number().int().positive().default(WECHAT_LIMITS.maxInboundFileBytes),
    max_outbound_file_bytes: z.number().int().positive().default(WECHAT_LIMITS.maxOutboundFileBytes),
    allowed_file_extensions: z
      .array(z.string().trim().min(1))
      .default([...DEFAULT_ALLOWED_FILE_EXTENSIONS])
      .transform((extensions) => extensions.map((e) => e.replace(/^\./, '').toLowerCase()))
      .describe('Extensions of (non-image) files accepted in and out.'),
  })
  .superRefine((config, ctx) => {
    if (config.enabled && config.bot_token === undefined && !config.qrcode_login_enabled) {
      ctx.addIssue({ code: 'custom', path: ['bot_token'], message: 'required when the WeChat channel is enabled (or set qrcode_login_enabled)' });
    }
    if (config.qrcode_login_enabled && config.state_dir === undefined) {
      ctx.addIssue({ code: 'custom', path: ['state_dir'], message: 'required with qrcode_login_enabled (the login is kept there)' });
    }
  })
  .prefault({});

export type WeChatConfig = z.output<typeof wechatConfigSchema>;
