/** A fake Discord (REST + gateway) for tests: point discord.js `rest.api` at `apiRoot`. */

export type { DiscordDisplay, DisplayDirectory, DisplayedLink, Pings } from './display.js';
export { displayOf, pingsOf } from './display.js';
export type { GatewayEvent } from './gateway.js';
export type { FakeDiscordOptions, Fault, RateLimitViolation, RecordedCall, RouteName, UserMessageInput } from './server.js';
export { FakeDiscord, MAX_CONTENT_CHARS, MAX_UPLOAD_BYTES } from './server.js';
export type { FakeChannel, FakeUser, StoredAttachment, StoredMessage } from './store.js';
export { CHANNEL_TYPES, snowflakeTime } from './store.js';
