/** What the WeChat channel says to people, and the status reasons operators read, in one place. */
export const WECHAT_TEXTS = {
  /** The standing acknowledgement (reference §6.0 "working" ack). */
  working: 'Working on it...',
  sessionExpired: 'WeChat session expired (errcode -14): set a new bot_token or log in again by QR code, then restart the channel',
  waitingForLogin: 'waiting for the WeChat QR-code login (the link is in the log)',
  loginFailed: 'WeChat QR-code login failed',
} as const;
