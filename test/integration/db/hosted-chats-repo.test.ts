import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { HostedChatsRepo } from '../../../src/db/repos/hosted-chats-repo.js';
import { UsersRepo } from '../../../src/db/repos/users-repo.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

describe.each(testDatabaseKinds())('hosted chats on %s', (kind) => {
  let database: DatabaseHandle;
  let repo: HostedChatsRepo;
  let ownerId: string;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    repo = new HostedChatsRepo(database.db);
    ownerId = (await new UsersRepo(database.db).create(`ana-${Date.now()}`)).user.id;
  });
  afterAll(() => database.close());

  it("keeps a conversation's messages in order, and a reply's final in its acknowledgement's row", async () => {
    const chats = repo.forPlatform('web');
    const conversation = await chats.createConversation({ ownerUserId: ownerId, title: 'first words' });
    const person = await chats.addMessage(conversation.id, { author: 'person', text: 'hi', isFinal: true });
    const working = await chats.addMessage(conversation.id, { author: 'agent', text: 'Working on it...', isFinal: false });
    const replaced = await chats.replaceMessage(working.id, { text: 'hello', isFinal: true });

    expect(replaced).toMatchObject({ id: working.id, text: 'hello', isFinal: true });
    expect((await chats.messages(conversation.id, { limit: 10 })).map((m) => [m.author, m.text, m.isFinal])).toEqual([
      ['person', 'hi', true],
      ['agent', 'hello', true],
    ]);
    expect((await chats.messages(conversation.id, { afterId: person.id, limit: 10 })).map((m) => m.id)).toEqual([working.id]);
    expect((await chats.conversations(ownerId, 10)).map((c) => c.id)).toContain(conversation.id);
    expect((await chats.conversations(undefined, 10)).map((c) => c.id)).not.toContain(conversation.id);
  });

  it("never shows one platform's conversations, messages or files through another's view", async () => {
    const web = repo.forPlatform('web');
    const other = repo.forPlatform('other');
    const conversation = await web.createConversation({ ownerUserId: undefined, title: '' });
    await web.addMessage(conversation.id, { author: 'person', text: 'mine', isFinal: true });
    const file = await web.putFile(conversation.id, { name: 'a.txt', mimeType: 'text/plain', bytes: new TextEncoder().encode('abc') });

    expect(await other.conversation(conversation.id)).toBeUndefined();
    expect(await other.messages(conversation.id, { limit: 10 })).toEqual([]);
    expect(await other.file(conversation.id, file.id)).toBeUndefined();
    expect(await other.fileRefs(conversation.id, [file.id])).toEqual([]);
    expect(await other.deleteConversation(conversation.id)).toBe(false);
    expect(Buffer.from((await web.file(conversation.id, file.id))?.bytes ?? []).toString()).toBe('abc');
  });

  it("finds files only in their own conversation, keeps NUL-free text, and deletes a conversation with all it held", async () => {
    const chats = repo.forPlatform('web');
    const mine = await chats.createConversation({ ownerUserId: ownerId, title: '' });
    const theirs = await chats.createConversation({ ownerUserId: undefined, title: '' });
    const file = await chats.putFile(mine.id, { name: 'n\u0000otes.txt', mimeType: 'text/plain', bytes: new Uint8Array([1, 2, 3]) });
    expect(file.name).toBe('notes.txt');
    expect(await chats.fileRefs(theirs.id, [file.id])).toEqual([]);
    expect(await chats.file(theirs.id, file.id)).toBeUndefined();
    expect(await chats.fileRefs(mine.id, [file.id])).toEqual([file]);
    const message = await chats.addMessage(mine.id, { author: 'person', text: 'a\u0000b', files: [file], isFinal: true });
    expect(message.text).toBe('ab');

    expect(await chats.deleteConversation(mine.id)).toBe(true);
    expect(await chats.conversation(mine.id)).toBeUndefined();
    expect(await chats.file(mine.id, file.id)).toBeUndefined();
    expect(await chats.replaceMessage(message.id, { text: 'x', isFinal: true })).toBeUndefined();
  });
});
