/** A fake OpenAI Chat Completions server for the real `@langchain/openai` client (sdk-recipes §7). */

export type {
  FakeChatMessage,
  FakeChatRequest,
  FakeOpenAIOptions,
  FakeReply,
  FakeResponder,
  FakeToolCall,
} from './server.js';
export { answerByAttempt, echoResponder, FakeOpenAI, lastUserText, messageText, requestTokens } from './server.js';
