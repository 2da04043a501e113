import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { HostedChats, HostedConversation } from '../../src/channel/hosted-chats.js';
import type { Topic } from '../../src/channel/topic.js';
import { AppError, NotFoundError } from '../../src/errors.js';
import { errorResponses } from '../../src/gateway/error-handler.js';
import type { ZodPluginAsync } from '../../src/gateway/validation.js';
import type { WebCaller } from './decide.js';
import { streamConversation } from './events.js';
import type { WebIngress } from './ingress.js';
import { WEB_LIMITS } from './limits.js';
import {
  afterQuery,
  conversationParams,
  conversationSchema,
  fileParams,
  messageBody,
  messageSchema,
  newConversationBody,
  submitResponse,
  uploadQuery,
} from './schemas.js';
import { conversationJson, messageJson } from './wire.js';

export type WebRoutesOptions = {
  chats: HostedChats;
  topic: Topic;
  ingress: WebIngress;
  maxFileBytes: number;
};

/** Pictures a browser may show inline; anything else is downloaded, never rendered on our origin. */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * Who the request is from. The gateway authenticated it: a user's key → that account; no key →
 * only possible on a server that requires none, where everyone shares the ownerless conversations.
 * The operator token is not a person: 403.
 */
function callerOf(request: FastifyRequest): WebCaller {
  const principal = request.principal;
  if (principal === undefined) return { ownerUserId: undefined, userId: 'local' };
  if (principal.kind === 'operator') {
    throw new AppError('FORBIDDEN', 'operator in the web chat', { status: 403, userMessage: 'Sign in with a user API key to chat.' });
  }
  return { ownerUserId: principal.user.id, userId: principal.user.id };
}

/** The conversation, if the caller may use it; anyone else's is a 404, as if it did not exist. */
async function ownConversation(chats: HostedChats, caller: WebCaller, id: string): Promise<HostedConversation> {
  const conversation = await chats.conversation(id);
  if (!conversation || conversation.ownerUserId !== caller.ownerUserId) throw new NotFoundError('Conversation');
  return conversation;
}

/**
 * The web chat's API, at `/api/chat/web` (`docs/api.md`): a person's conversations, their
 * messages and files, posting a message (admitted like any platform's), and an event stream of
 * replies as they are written.
 */
export const webRoutes: ZodPluginAsync<WebRoutesOptions> = async (app, { chats, topic, ingress, maxFileBytes }) => {
  // Uploads are the file's bytes as the body; only in this context.
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: maxFileBytes }, (_request, body, done) => done(null, body));

  app.get('/conversations', { schema: { response: { 200: z.object({ conversations: z.array(conversationSchema) }), ...errorResponses } } }, async (request) => {
    const found = await chats.conversations(callerOf(request).ownerUserId, WEB_LIMITS.listedConversations);
    return { conversations: found.map(conversationJson) };
  });

  app.post(
    '/conversations',
    { schema: { body: newConversationBody, response: { 201: z.object({ conversation: conversationSchema }), ...errorResponses } } },
    async (request, reply) => {
      const conversation = await chats.createConversation({ ownerUserId: callerOf(request).ownerUserId, title: request.body.title });
      return reply.status(201).send({ conversation: conversationJson(conversation) });
    },
  );

  app.delete('/conversations/:id', { schema: { params: conversationParams, response: { 200: z.object({ deleted: z.boolean() }), ...errorResponses } } }, async (request) => {
    const conversation = await ownConversation(chats, callerOf(request), request.params.id);
    return { deleted: await chats.deleteConversation(conversation.id) };
  });

  app.get(
    '/conversations/:id/messages',
    { schema: { params: conversationParams, querystring: afterQuery, response: { 200: z.object({ messages: z.array(messageSchema) }), ...errorResponses } } },
    async (request) => {
      const conversation = await ownConversation(chats, callerOf(request), request.params.id);
      const messages = await chats.messages(conversation.id, { afterId: request.query.after, limit: WEB_LIMITS.transcriptPage });
      return { messages: messages.map(messageJson) };
    },
  );

  app.post(
    '/conversations/:id/messages',
    { schema: { params: conversationParams, body: messageBody, response: { 202: submitResponse, 200: submitResponse, 503: submitResponse, ...errorResponses } } },
    async (request, reply) => {
      const caller = callerOf(request);
      const conversation = await ownConversation(chats, caller, request.params.id);
      const { text, client_message_id: clientMessageId, file_ids: fileIds } = request.body;
      const files = await chats.fileRefs(conversation.id, fileIds);
      if (files.length !== new Set(fileIds).size) throw new NotFoundError('File');
      const outcome = await ingress.submit({ conversation, caller, text, clientMessageId, files });
      // The pipeline told the person already when it refused (a message in the conversation).
      if (outcome === 'refused') return reply.status(503).send({ outcome });
      if (outcome === 'duplicate') return reply.status(200).send({ outcome });
      return reply.status(202).send({ outcome: 'accepted' });
    },
  );

  app.post(
    '/conversations/:id/files',
    {
      bodyLimit: maxFileBytes,
      schema: { params: conversationParams, querystring: uploadQuery, response: { 201: z.object({ file: messageSchema.shape.files.element }), ...errorResponses } },
    },
    async (request, reply) => {
      const conversation = await ownConversation(chats, callerOf(request), request.params.id);
      if (!Buffer.isBuffer(request.body)) {
        throw new AppError('BAD_REQUEST', 'upload without octet-stream body', { status: 415, userMessage: "Send the file's bytes with content-type application/octet-stream." });
      }
      const ref = await chats.putFile(conversation.id, { name: request.query.name, mimeType: request.query.type, bytes: request.body });
      return reply.status(201).send({ file: { id: ref.id, name: ref.name, mime_type: ref.mimeType, size: ref.size } });
    },
  );

  app.get('/conversations/:id/files/:file_id', { schema: { params: fileParams } }, async (request, reply) => {
    const conversation = await ownConversation(chats, callerOf(request), request.params.id);
    const file = await chats.file(conversation.id, request.params.file_id);
    if (!file) throw new NotFoundError('File');
    const isInline = INLINE_TYPES.has(file.mimeType);
    return reply
      .header('content-type', isInline ? file.mimeType : 'application/octet-stream')
      .header('content-disposition', `${isInline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(file.name)}`)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(Buffer.from(file.bytes));
  });

  app.get('/conversations/:id/events', { schema: { params: conversationParams, querystring: afterQuery } }, async (request, reply) => {
    const conversation = await ownConversation(chats, callerOf(request), request.params.id);
    await streamConversation(reply, { chats, topic, conversationId: conversation.id, afterId: request.query.after });
  });
};
