export { type Delivered, type FakeBotMessage, FakeWeChat, type FakeWeChatOptions, type Fault, type RecordedCall, type UserMessageInput } from './server.js';
export { displayText } from './display.js';
