import { z } from 'zod';

/**
 * Why `url` cannot be a remote agent server's API root, or undefined when it can: an absolute
 * http(s) URL, without credentials (the key goes in `api_key`, where it is never logged), query
 * or fragment (paths are appended to it). Pure; the config and the remote runtime share it.
 */
export function apiRootProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http(s) URL of the agent server API, e.g. http://agent-host:8001/api';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must use http or https';
  if (parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '') {
    return 'must be the API root alone, without credentials, query or fragment (the key goes in api_key)';
  }
  return undefined;
}

/**
 * `runtime:`: where the agent runs. Absent `url`, in this process (the embedded LangGraph
 * runtime); with it, on another LangGraph-compatible server this one drives through
 * `@langchain/langgraph-sdk` (another instance of this server, DeerFlow's gateway, LangGraph
 * Platform).
 */
export const runtimeConfigSchema = z
  .strictObject({
    url: z
      .string()
      .superRefine((url, context) => {
        const problem = apiRootProblem(url);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .describe('API root of the agent server, e.g. http://agent-host:8001/api. Absent: the agent runs in this process.'),
    api_key: z
      .string()
      .min(1)
      .optional()
      .describe("Key for the agent server: on another instance of this server, its auth.admin_token (runs keep each person's identity and shell trust)."),
    timeout_seconds: z
      .number()
      .positive()
      .max(600)
      .default(30)
      .describe('Bound of each ordinary call to the agent server (not of runs, which take as long as they take).'),
  })
  .superRefine((runtime, context) => {
    if (runtime.api_key !== undefined && runtime.url === undefined) {
      context.addIssue({ code: 'custom', path: ['api_key'], message: 'is only used with runtime.url' });
    }
  })
  .prefault({});

export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;
