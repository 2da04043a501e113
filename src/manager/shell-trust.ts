import type { InboundMessage } from '../channel/types.js';

/**
 * A message after the manager's identity gate. `isOwnerShellGranted` is set by the gate from the
 * bound owner's account (`users.can_use_shell`), never by ingress.
 */
export interface IdentifiedMessage extends InboundMessage {
  isOwnerShellGranted?: boolean;
}

/**
 * Whether a chat sender's runs get `bash` (`context.trusted_sender`), from routed facts only:
 * listed in the channel's `allowed_users` (the operator vouched for them), or bound to a server
 * account. Outside accounts mode being bound is enough, as before; in accounts mode (`isAccountsMode`:
 * the manager has an identity gate) the owner must also hold the operator's shell grant, since a
 * shell shared by every account reaches the others' files.
 */
export function isTrustedSender(message: IdentifiedMessage, isAccountsMode: boolean): boolean {
  if (message.senderIsAllowlisted === true) return true;
  if (message.ownerUserId === undefined) return false;
  return !isAccountsMode || message.isOwnerShellGranted === true;
}
