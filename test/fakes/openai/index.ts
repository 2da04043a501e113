/** A fake OpenAI Chat Completions server for the real `@langchain/openai` client (sdk-recipes §7). */
export { answerByAttempt, FakeOpenAI, echoResponder, lastUserText } from './server.js';
export type {
  FakeChatMessage,
  FakeChatRequest,
  FakeOpenAIOptions,
  FakeReply,
  FakeResponder,
  FakeToolCall,
} from './server.js';
