import { describe, expect, it } from 'vitest';
import { JournaledIntake } from '../../../src/channel/journaled-intake.js';
import { type DedupeKey, MemoryTurnJournal } from '../../../src/channel/turn-journal.js';
import type { InboundMessage } from '../../../src/channel/types.js';
import { AppError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

function message(messageId: string, overrides: Partial<InboundMessage> = {}): InboundMessage {
  return {
    channel: 'fake',
    chatId: 'c1',
    userId: 'u1',
    workspaceId: 'w1',
    messageId,
    text: `text ${messageId}`,
    kind: 'chat',
    isPrivateChat: true,
    replyTo: { messageId, placeholderId: `p${messageId}` },
    receivedAt: 0,
    ...overrides,
  };
}

/** A bus whose reservations count how often they were released. */
class CountingBus extends RecordingIntake {
  released = 0;
  failCommits = false;

  override async reserve() {
    const reservation = await super.reserve();
    return {
      commit: async (m: InboundMessage) => {
        if (this.failCommits) throw new AppError('INBOUND_QUEUE_CLOSED', 'closed');
        await reservation.commit(m);
      },
      release: () => {
        this.released++;
      },
    };
  }
}

describe('JournaledIntake', () => {
  const setUp = (journal = new MemoryTurnJournal()) => {
    const bus = new CountingBus();
    const duplicates: string[] = [];
    const intake = new JournaledIntake({ intake: bus, journal, logger: silentLogger(), onDuplicate: (channel) => void duplicates.push(channel) });
    const commit = async (m: InboundMessage) => (await intake.reserve()).commit(m);
    return { bus, journal, duplicates, commit };
  };

  it('hands a message to the bus once: its redelivery is refused as a duplicate, its slot given back', async () => {
    const { bus, duplicates, commit } = setUp();
    await commit(message('1'));
    await expect(commit(message('1'))).rejects.toMatchObject({ code: 'DUPLICATE_DELIVERY' });
    expect(bus.committed.map((m) => m.messageId)).toEqual(['1']);
    expect(bus.released).toBe(1);
    expect(duplicates).toEqual(['fake']);
  });

  it('journals the message with its reply target before the bus has it', async () => {
    const { journal, commit } = setUp();
    await commit(message('1'));
    expect((await journal.resumeUnfinished()).map((turn) => turn.message)).toEqual([message('1')]);
  });

  it('does not dedupe messages without a workspace (ids could collide across workspaces)', async () => {
    const { bus, commit } = setUp();
    await commit(message('1', { workspaceId: undefined }));
    await commit(message('1', { workspaceId: undefined }));
    expect(bus.committed).toHaveLength(2);
  });

  it('lets a resumed turn through, although it is in the journal', async () => {
    const { bus, commit } = setUp();
    await commit(message('1'));
    await commit({ ...message('1'), resumes: 1 });
    expect(bus.committed.map((m) => m.resumes)).toEqual([undefined, 1]);
  });

  it('withdraws the journal entry when the bus refuses the message, so its redelivery is taken', async () => {
    const { bus, commit } = setUp();
    bus.failCommits = true;
    await expect(commit(message('1'))).rejects.toMatchObject({ code: 'INBOUND_QUEUE_CLOSED' });
    bus.failCommits = false;
    await commit(message('1'));
    expect(bus.committed.map((m) => m.messageId)).toEqual(['1']);
  });

  it('accepts the message when the journal is down: answering twice beats never answering', async () => {
    const journal = new MemoryTurnJournal();
    journal.accept = async (_key: DedupeKey) => {
      throw new Error('database down');
    };
    const { bus, commit } = setUp(journal);
    await commit(message('1'));
    expect(bus.committed).toHaveLength(1);
  });
});
