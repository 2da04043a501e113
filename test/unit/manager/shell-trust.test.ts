import { describe, expect, it } from 'vitest';
import { type IdentifiedMessage, isTrustedSender } from '../../../src/manager/shell-trust.js';
import { inboundIn } from './fixtures.js';

describe('isTrustedSender: who gets bash in chat', () => {
  const message = (facts: Partial<IdentifiedMessage>): IdentifiedMessage => ({ ...inboundIn('c1', 'hi'), ...facts });

  it.each<[string, Partial<IdentifiedMessage>, boolean, boolean]>([
    ['a stranger, outside accounts mode', {}, false, false],
    ['a stranger, in accounts mode', {}, true, false],
    ['an allowed_users sender, outside accounts mode', { senderIsAllowlisted: true }, false, true],
    ['an allowed_users sender, in accounts mode', { senderIsAllowlisted: true }, true, true],
    ['an owner set by event ingress (GitHub), outside accounts mode', { ownerUserId: 'u1' }, false, true],
    ['a bound sender of an ungranted owner, in accounts mode', { ownerUserId: 'u1', isOwnerShellGranted: false }, true, false],
    ['a bound sender without a grant fact, in accounts mode', { ownerUserId: 'u1' }, true, false],
    ['a bound sender of a granted owner, in accounts mode', { ownerUserId: 'u1', isOwnerShellGranted: true }, true, true],
    ['a grant fact without any owner', { isOwnerShellGranted: true }, true, false],
  ])('%s → %s', (_name, facts, isAccountsMode, expected) => {
    expect(isTrustedSender(message(facts), isAccountsMode)).toBe(expected);
  });
});
