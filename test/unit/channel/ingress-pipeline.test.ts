import { describe, expect, it } from 'vitest';
import type { IngressDecision, PendingInbound } from '../../../src/channel/ingress/decision.js';
import { INGRESS_TEXTS, type IngressAdapter, IngressPipeline } from '../../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../../src/channel/ingress/runner.js';
import type { ChatBinder, InboundReservation, ReplyTarget } from '../../../src/channel/types.js';
import { AppError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { MemoryWebhookDeliveries } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

const message: PendingInbound = { channel: 'fake', chatId: 'c1', userId: 'u1', messageId: 'm1', text: 'hi', kind: 'chat', isPrivateChat: true };
const forward = (key = 'k1', pending: PendingInbound = message): IngressDecision => ({ kind: 'forward', deliveryKey: key, message: pending });

/** An in-test platform: what the person saw, in order. */
class FakeAdapter implements IngressAdapter {
  readonly platform = 'fake';
  readonly seen: string[] = [];
  refusal: 'redeliver' | 'tell' = 'redeliver';
  private placeholders = 0;

  async say(target: ReplyTarget, text: string): Promise<void> {
    this.seen.push(`say ${target.chatId}/${target.replyTo.messageId}: ${text}`);
  }

  async acknowledge(pending: PendingInbound): Promise<string> {
    const id = `p${++this.placeholders}`;
    this.seen.push(`placeholder ${id} for ${pending.messageId}`);
    return id;
  }

  async withdraw(_pending: PendingInbound, placeholderId: string): Promise<void> {
    this.seen.push(`withdraw ${placeholderId}`);
  }
}

function setup(options: { binder?: ChatBinder; deliveries?: MemoryWebhookDeliveries } = {}) {
  const adapter = new FakeAdapter();
  const intake = new RecordingIntake();
  const deliveries = options.deliveries ?? new MemoryWebhookDeliveries();
  const pipeline = new IngressPipeline(adapter, { intake, deliveries, now: Date.now, ...(options.binder ? { binder: options.binder } : {}) }, silentLogger());
  return { adapter, intake, deliveries, pipeline };
}

describe('IngressPipeline', () => {
  it('acknowledges, then commits with the placeholder as the reply target, and records the delivery done', async () => {
    const { adapter, intake, deliveries, pipeline } = setup();
    expect(await pipeline.admit(forward(), 1234)).toBe('accepted');
    expect(adapter.seen).toEqual(['placeholder p1 for m1']);
    expect(intake.committed).toEqual([{ ...message, replyTo: { messageId: 'm1', placeholderId: 'p1' }, receivedAt: 1234 }]);
    expect(deliveries.entries.get('k1')?.status).toBe('done');
  });

  it('tells a push transport to leave a message for redelivery only when the intake has no room and the platform sends it again', async () => {
    const { intake, pipeline } = setup();
    // An intake that cannot tell: admission decides.
    expect(await pipeline.leavesForRedelivery(true)).toBe(false);
    let hasRoom: () => Promise<boolean> = async () => false;
    Object.assign(intake, { hasRoom: () => hasRoom() });
    expect(await pipeline.leavesForRedelivery(true)).toBe(true);
    // The platform's last delivery: admitted, so a refusal is told.
    expect(await pipeline.leavesForRedelivery(false)).toBe(false);
    hasRoom = async () => true;
    expect(await pipeline.leavesForRedelivery(true)).toBe(false);
    hasRoom = () => Promise.reject(new Error('bus unreachable'));
    expect(await pipeline.leavesForRedelivery(true)).toBe(false);
  });

  it('runs a delivery claimed before once only', async () => {
    const { intake, pipeline } = setup();
    expect(await pipeline.admit(forward(), 1)).toBe('accepted');
    expect(await pipeline.admit(forward(), 2)).toBe('duplicate');
    expect(intake.committed).toHaveLength(1);
  });

  it('leaves a message the full intake refused for redelivery: nothing shown, the claim dropped so it runs next time', async () => {
    const { adapter, intake, deliveries, pipeline } = setup();
    intake.isFull = true;
    expect(await pipeline.admit(forward(), 1)).toBe('refused');
    expect(adapter.seen).toEqual([]);
    expect(deliveries.entries.get('k1')?.status).toBe('failed');
    intake.isFull = false;
    expect(await pipeline.admit(forward(), 2)).toBe('accepted');
  });

  it('tells the person to send it again where the platform will not redeliver', async () => {
    const { adapter, intake, pipeline } = setup();
    adapter.refusal = 'tell';
    intake.isFull = true;
    expect(await pipeline.admit(forward(), 1)).toBe('refused');
    expect(adapter.seen).toEqual([`say c1/m1: ${INGRESS_TEXTS.busy}`]);
  });

  it('withdraws the placeholder when the commit fails, and refuses', async () => {
    const { adapter, intake, pipeline } = setup();
    let released = 0;
    intake.reserve = async (): Promise<InboundReservation> => ({
      commit: async () => Promise.reject(new AppError('INBOUND_QUEUE_CLOSED', 'closing')),
      release: () => void released++,
    });
    expect(await pipeline.admit(forward(), 1)).toBe('refused');
    expect(adapter.seen).toEqual(['placeholder p1 for m1', 'withdraw p1']);
    expect(released).toBe(1);
  });

  it('withdraws the placeholder of a message the journal had already, without telling anyone', async () => {
    const { adapter, intake, pipeline } = setup();
    adapter.refusal = 'tell';
    intake.reserve = async (): Promise<InboundReservation> => ({
      commit: async () => Promise.reject(new AppError('DUPLICATE_DELIVERY', 'seen')),
      release: () => undefined,
    });
    expect(await pipeline.admit(forward(), 1)).toBe('duplicate');
    expect(adapter.seen).toEqual(['placeholder p1 for m1', 'withdraw p1']);
  });

  it('admits anyway when the delivery store is down', async () => {
    const deliveries = new MemoryWebhookDeliveries();
    deliveries.begin = async () => Promise.reject(new Error('database down'));
    const { intake, pipeline } = setup({ deliveries });
    expect(await pipeline.admit(forward(), 1)).toBe('accepted');
    expect(intake.committed).toHaveLength(1);
  });

  it('binds with the binder and answers in the chat, committing nothing', async () => {
    const requests: unknown[] = [];
    const binder: ChatBinder = {
      bind: async (provider, request) => {
        requests.push([provider, request.code]);
        return 'Connected.';
      },
    };
    const { adapter, intake, pipeline } = setup({ binder });
    const target: ReplyTarget = { chatId: 'c1', isPrivateChat: true, replyTo: { messageId: 'm9' } };
    const decision: IngressDecision = { kind: 'bind', deliveryKey: 'k9', request: { identity: { externalAccountId: 'u1' }, code: 'ABC' }, answerTo: target };
    expect(await pipeline.admit(decision, 1)).toBe('bound');
    expect(requests).toEqual([['fake', 'ABC']]);
    expect(adapter.seen).toEqual(['say c1/m9: Connected.']);
    expect(intake.committed).toEqual([]);
  });

  it('ignores what the decide step ignored, claiming nothing', async () => {
    const { deliveries, pipeline } = setup();
    expect(await pipeline.admit({ kind: 'ignore', reason: 'not-allowed' }, 1)).toBe('ignored');
    expect(deliveries.entries.size).toBe(0);
  });
});

describe('IngressRunner', () => {
  it("runs one chat's work in order and other chats beside it; a failure does not stop the chat", async () => {
    const runner = new IngressRunner(silentLogger());
    const order: string[] = [];
    let releaseFirst: () => void = () => undefined;
    const first = runner.run(
      'a',
      () =>
        new Promise<void>((resolve) => {
          releaseFirst = () => {
            order.push('a1');
            resolve();
          };
        }),
    );
    const failing = runner.run('a', async () => {
      order.push('a2');
      throw new Error('boom');
    });
    const third = runner.run('a', async () => order.push('a3'));
    await runner.run('b', async () => order.push('b1'));
    expect(order).toEqual(['b1']);
    releaseFirst();
    await Promise.all([first, failing, third]);
    expect(order).toEqual(['b1', 'a1', 'a2', 'a3']);
    expect(await failing).toBeUndefined();
  });

  it('stops within its bound even when work hangs', async () => {
    const runner = new IngressRunner(silentLogger());
    void runner.run('a', () => new Promise(() => undefined));
    await runner.stop(20);
  });
});
