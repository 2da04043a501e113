// biome-ignore lint/suspicious/noExplicitAny: response bodies are read as JSON and checked by the assertions.
export type Json = Record<string, any>;

/** One answer of the gateway: its status and its JSON body (undefined when empty). */
export interface ApiAnswer {
  status: number;
  body: Json | undefined;
}

/**
 * A JSON caller of the server at `url()` (read on every call: the server starts in `beforeAll`):
 * `key` becomes `Authorization: Bearer <key>`, `body` is sent as JSON.
 */
export function apiClient(url: () => string) {
  return async (method: string, path: string, key: string | undefined, body?: unknown): Promise<ApiAnswer> => {
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Json) };
  };
}
