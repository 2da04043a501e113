import { describe, expect, it } from 'vitest';
import type { BashAccess } from '../../../../src/agent/sandbox/config.js';
import { accessFor, type ShellIsolation } from '../../../../src/runtime/embedded/run-request.js';
import type { RunRequest } from '../../../../src/runtime/types.js';

const request = (trusted: boolean | undefined): RunRequest => ({
  assistant_id: 'lead_agent',
  context: trusted === undefined ? {} : { trusted_sender: trusted },
});

const ISOLATED: ShellIsolation = { isShellIsolated: true, isIsolationExplicit: false };
const NONE_CHOSEN: ShellIsolation = { isShellIsolated: false, isIsolationExplicit: true };
const UNISOLATED: ShellIsolation = { isShellIsolated: false, isIsolationExplicit: false };

describe('accessFor: who gets bash', () => {
  it.each<[BashAccess, boolean | undefined, ShellIsolation | undefined, boolean]>([
    // trusted: the server's decision on the sender, whatever the isolation
    ['trusted', true, ISOLATED, true],
    ['trusted', true, UNISOLATED, true],
    ['trusted', false, ISOLATED, false],
    ['trusted', false, NONE_CHOSEN, false],
    ['trusted', undefined, UNISOLATED, true],
    // everyone: strangers too, but only on an isolated shell or an explicit `isolation: none`
    ['everyone', false, ISOLATED, true],
    ['everyone', false, NONE_CHOSEN, true],
    ['everyone', false, UNISOLATED, false],
    ['everyone', false, undefined, false],
    ['everyone', true, UNISOLATED, true],
    ['everyone', undefined, UNISOLATED, true],
    // nobody: never
    ['nobody', true, ISOLATED, false],
    ['nobody', true, NONE_CHOSEN, false],
    ['nobody', undefined, UNISOLATED, false],
  ])('bash_access %s, trusted_sender %s, isolation %o → bash %s', (policy, trusted, isolation, expected) => {
    expect(accessFor(policy, request(trusted), isolation).bash).toBe(expected);
  });

  it('keeps clarification unless the channel cannot answer questions', () => {
    expect(accessFor('trusted', request(true)).clarification).toBe(true);
    expect(accessFor('trusted', { assistant_id: 'lead_agent', context: { disable_clarification: true } }).clarification).toBe(false);
  });
});
