import { describe, expect, it } from 'vitest';
import { fileRef, parseFileRef, parsePlaceholderId, placeholderIdOf } from '../../../../channels/web/ids.js';

describe('web chat ids', () => {
  it('round-trips placeholder ids and file refs', () => {
    expect(parsePlaceholderId(placeholderIdOf(12, 11))).toEqual({ reply: 12, person: 11 });
    expect(parseFileRef(fileRef('c-1', 'f-2'))).toEqual({ conversationId: 'c-1', fileId: 'f-2' });
  });

  it.each(['', '12', '12.', '.11', '0.1', '1.0', '-1.2', '1.2.3', '1e3.2', '12345678901234567.1', ' 1.2'])('reads %j as no placeholder', (id) => {
    expect(parsePlaceholderId(id)).toBeUndefined();
  });

  it.each(['', 'c', 'c/', '/f', 'c/f/x'])('reads %j as no file ref', (ref) => {
    expect(parseFileRef(ref)).toBeUndefined();
  });
});
