import { randomUUID } from 'node:crypto';
import { Waiters } from '../fakes/waiters.js';

/** A frame of the web chat's event stream, as a page receives it. */
export interface WebFrame {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: frames are JSON the test reads field by field.
  data: any;
}

/** A page's open event stream: every frame received so far, and a wait for what it should show. */
export interface EventStream {
  readonly frames: WebFrame[];
  waitFor<T>(predicate: (frames: WebFrame[]) => T | false | null | undefined, timeoutMs?: number): Promise<T>;
  close(): void;
}

/** The web chat's API as a page calls it, with one person's key (none on a server without keys). */
export function webChat(baseUrl: () => string, key: string | undefined) {
  const headers = (extra: Record<string, string> = {}) => ({ ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra });
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl()}/api/chat/web${path}`, {
      method,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field.
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as any };
  };
  return {
    call,
    async newConversation(title = ''): Promise<string> {
      const answer = await call('POST', '/conversations', { title });
      if (answer.status !== 201) throw new Error(`conversation not created: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.conversation.id as string;
    },
    send(conversationId: string, text: string, options: { fileIds?: string[]; clientMessageId?: string } = {}) {
      return call('POST', `/conversations/${conversationId}/messages`, {
        text,
        client_message_id: options.clientMessageId ?? randomUUID(),
        ...(options.fileIds ? { file_ids: options.fileIds } : {}),
      });
    },
    async upload(conversationId: string, name: string, type: string, bytes: Buffer) {
      const response = await fetch(`${baseUrl()}/api/chat/web/conversations/${conversationId}/files?name=${encodeURIComponent(name)}&type=${encodeURIComponent(type)}`, {
        method: 'POST',
        headers: headers({ 'content-type': 'application/octet-stream' }),
        body: bytes,
      });
      // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field.
      return { status: response.status, body: (await response.json()) as any };
    },
    async download(conversationId: string, fileId: string) {
      const response = await fetch(`${baseUrl()}/api/chat/web/conversations/${conversationId}/files/${fileId}`, { headers: headers() });
      return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
    },
    /** Opens the conversation's event stream; resolves once the server answered with its head. */
    async events(conversationId: string, after = 0): Promise<EventStream & { status: number }> {
      const controller = new AbortController();
      const response = await fetch(`${baseUrl()}/api/chat/web/conversations/${conversationId}/events?after=${after}`, {
        headers: headers(),
        signal: controller.signal,
      });
      const frames: WebFrame[] = [];
      const waiters = new Waiters('web chat event stream');
      if (response.ok && response.body) {
        void (async () => {
          const decoder = new TextDecoder();
          let buffered = '';
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
            buffered += decoder.decode(chunk, { stream: true });
            for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
              const block = buffered.slice(0, end);
              buffered = buffered.slice(end + 2);
              const event = /^event: (.*)$/m.exec(block)?.[1];
              const data = /^data: (.*)$/m.exec(block)?.[1];
              if (event !== undefined && data !== undefined) frames.push({ event, data: JSON.parse(data) });
            }
            waiters.notify();
          }
        })().catch(() => undefined);
      }
      return {
        status: response.status,
        frames,
        waitFor: (predicate, timeoutMs = 60_000) => waiters.waitFor(() => predicate(frames), timeoutMs),
        close: () => controller.abort(),
      };
    },
  };
}

/** The final message frames of the agent, in order. */
export function agentFinals(frames: WebFrame[]): string[] {
  return frames.filter((f) => f.event === 'message' && f.data.author === 'agent' && f.data.is_final).map((f) => f.data.text as string);
}
