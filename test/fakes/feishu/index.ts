/** A fake Feishu/Lark for tests: point the SDK's `domain` (config `domain`) at `url`. */

export { decodeFrame, encodeFrame, FRAME_METHOD } from './frames.js';
export type { FakeFault, FakeOperation, FeishuMessageView, PushedEvent, RecordedCall, UserMessageInput } from './server.js';
export { FakeFeishu, textOf } from './server.js';
