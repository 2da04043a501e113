/** Ids of the web chat as they travel through core: opaque there, read only in this folder. Pure. */

/**
 * The acknowledgement's id as the reply target carries it: the row the reply replaces, then the
 * person's row it answers (`<reply>.<person>`), so that taking an acknowledgement back needs no
 * state in the process that posted it.
 */
export function placeholderIdOf(replyRow: number, personRow: number): string {
  return `${replyRow}.${personRow}`;
}

/** The rows a placeholder id names; undefined for anything else. */
export function parsePlaceholderId(placeholderId: string): { reply: number; person: number } | undefined {
  const match = /^([1-9][0-9]{0,15})\.([1-9][0-9]{0,15})$/.exec(placeholderId);
  return match ? { reply: Number(match[1]), person: Number(match[2]) } : undefined;
}

/** An inbound file's `ref`: the conversation and the file, so a download reads only that conversation's files. */
export function fileRef(conversationId: string, fileId: string): string {
  return `${conversationId}/${fileId}`;
}

/** The conversation and file an inbound file's `ref` names; undefined for anything else. */
export function parseFileRef(ref: string): { conversationId: string; fileId: string } | undefined {
  const [conversationId, fileId, ...rest] = ref.split('/');
  return conversationId && fileId && rest.length === 0 ? { conversationId, fileId } : undefined;
}
