import { isDefaultAgent } from '../prompt.js';

/**
 * Whose memory a run reads and adds to (issue #16): a person's own with the default agent, and
 * one of each (person, custom agent) pair otherwise. A GitHub agent acting for its owner, or any
 * custom agent, neither reads the person's personal memory into its prompt nor writes what it
 * learned into it. The pair's memory is kept under a key no storage user id can take: those are
 * account UUIDs, `default`, or platform ids made safe (`src/manager/user-id.ts`), none with a `:`.
 */
export function memoryOwnerOf(userId: string, agentName: string | undefined): string {
  return isDefaultAgent(agentName) ? userId : `${userId}:agent:${agentName}`;
}

