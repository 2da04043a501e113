/** A fake Slack for tests: point Bolt's `clientOptions.slackApiUrl` (config `api_url`) at `apiUrl`. */

export type { ChannelType, SlackMessageView } from './messages.js';
export { MAX_MARKDOWN_CHARS, MAX_TEXT_CHARS } from './messages.js';
export type { Delivered, FakeSlackOptions, Fault, RateLimitViolation, RecordedCall, UserMessageInput } from './server.js';
export { FakeSlack } from './server.js';
