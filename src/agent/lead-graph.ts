import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { type AIMessage, type AIMessageChunk, type BaseMessage, isAIMessage, isToolMessage } from '@langchain/core/messages';
import type { Runnable, RunnableConfig } from '@langchain/core/runnables';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { Annotation, END, type Messages, messagesStateReducer, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { ChatOpenAI } from '@langchain/openai';

/** A thread's state: its messages, and the summary of the turns folded out of them (`ContextKeeper`). */
export const LeadState = Annotation.Root({
  messages: Annotation<BaseMessage[], Messages>({ reducer: messagesStateReducer, default: () => [] }),
  summary: Annotation<string | undefined>(),
});

export type LeadStateValues = typeof LeadState.State;
export type LeadStateUpdate = typeof LeadState.Update;

/** One model call's request: what the model reads, and a state update that lands with its answer. */
export interface ModelRequest {
  messages: BaseMessage[];
  update?: { messages: BaseMessage[]; summary: string };
}

export interface LeadGraphParts {
  model: ChatOpenAI;
  tools: StructuredToolInterface[];
  request(state: LeadStateValues, config: RunnableConfig): Promise<ModelRequest>;
  /** Where the thread's state is kept; `false` for a graph whose conversation ends with its run (a helper's). */
  checkpointer: BaseCheckpointSaver | false;
}

/**
 * The ReAct loop: `agent` calls the model, `tools` runs the tool calls of its answer, and the
 * loop ends at an answer without tool calls or after a `returnDirect` tool (`ask_clarification`).
 * Built here rather than with LangGraph's `createReactAgent`, because a model call may also fold
 * older turns into the summary, and that must land in the state in the same step as its answer
 * (a separate hook node would cost a step per call and a channel holding the request).
 */
export function buildLeadGraph(parts: LeadGraphParts) {
  const model: Runnable<BaseLanguageModelInput, AIMessageChunk> = parts.tools.length > 0 ? parts.model.bindTools(parts.tools) : parts.model;
  const returnsDirect = new Set(parts.tools.filter((tool) => tool.returnDirect).map((tool) => tool.name));

  const agent = async (state: LeadStateValues, config: RunnableConfig): Promise<LeadStateUpdate> => {
    const request = await parts.request(state, config);
    const answer = await model.invoke(request.messages, config);
    return request.update ? { ...request.update, messages: [...request.update.messages, answer] } : { messages: [answer] };
  };

  const afterAgent = (state: LeadStateValues): 'tools' | typeof END => {
    const last = state.messages.at(-1);
    return last !== undefined && isAIMessage(last) && ((last as AIMessage).tool_calls?.length ?? 0) > 0 ? 'tools' : END;
  };

  const afterTools = (state: LeadStateValues): 'agent' | typeof END => {
    for (let i = state.messages.length - 1; i >= 0; i--) {
      const message = state.messages[i] as BaseMessage;
      if (!isToolMessage(message)) break;
      if (message.name !== undefined && returnsDirect.has(message.name)) return END;
    }
    return 'agent';
  };

  return new StateGraph(LeadState)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode(parts.tools))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', afterAgent, ['tools', END])
    .addConditionalEdges('tools', afterTools, ['agent', END])
    .compile({ checkpointer: parts.checkpointer });
}

export type LeadGraph = ReturnType<typeof buildLeadGraph>;
