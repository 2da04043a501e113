import { afterEach, describe, expect, it } from 'vitest';
import { INGRESS_TEXTS } from '../../../src/channel/ingress/pipeline.js';
import { silentLogger } from '../../../src/logger.js';
import type { FakeSlack } from '../../fakes/slack/index.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { startSlackOn } from './slack-transport.js';

/**
 * Issue #15: a message that finds the intake full is refused before Slack's acknowledgement
 * (HTTP 503; in Socket Mode its envelope is left unacknowledged), so Slack sends it again and it
 * is answered without the person doing anything. Only at Slack's last retry is the person told
 * to send it again. Through Bolt and the real adapter against the fake Slack, which retries as
 * Slack does (faster).
 */

const ALICE = 'U0ALICE1';
const DM = `D${ALICE}`;

/** An intake that says it has no room for the first `fullFor` asks (all of them when undefined). */
class FullForAWhileIntake extends RecordingIntake {
  asked = 0;

  constructor(private readonly fullFor: number | undefined) {
    super();
    this.isFull = fullFor === undefined;
  }

  async hasRoom(): Promise<boolean> {
    this.asked += 1;
    return this.fullFor !== undefined && this.asked > this.fullFor;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function startSlack(mode: 'http' | 'socket', intake: RecordingIntake): Promise<FakeSlack> {
  return startSlackOn(mode, { intake, logger: silentLogger(), fake: { retryDelaysMs: [100, 100, 100] }, cleanups });
}

/** Slack's deliveries of one event so far: the retry number of each and, over HTTP, its answer. */
function deliveriesOf(fake: FakeSlack, mode: 'http' | 'socket', sent: { eventId: string; envelopeId: string }) {
  return mode === 'http'
    ? fake.eventResponses.filter((r) => r.eventId === sent.eventId).map((r) => ({ retry: r.retryNum, status: r.status }))
    : fake.pushes.filter((p) => p.envelopeId === sent.envelopeId).map((p) => ({ retry: p.retryAttempt, isAcked: fake.acks.some((a) => a.envelopeId === p.envelopeId) }));
}

describe.each(['http', 'socket'] as const)('Slack with the intake full (%s)', (mode) => {
  it('leaves the message for Slack to send again and answers it then, without a busy notice', async () => {
    const intake = new FullForAWhileIntake(2);
    const fake = await startSlack(mode, intake);
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'hello while busy' });
    const [committed] = await intake.waitForCommits(1);
    expect(committed).toMatchObject({ messageId: sent.ts, text: 'hello while busy' });
    // Refused twice, taken at the second retry. (In Socket Mode a busy machine may ack that one
    // after the fake's short retry delay: Slack then retries once more, and that one is a duplicate.)
    expect(deliveriesOf(fake, mode, sent).map((d) => d.retry).slice(0, 3)).toEqual([0, 1, 2]);
    if (mode === 'http') expect(deliveriesOf(fake, mode, sent).map((d) => ('status' in d ? d.status : 0))).toEqual([503, 503, 200]);
    else await fake.waitFor(() => fake.acks.some((a) => a.envelopeId === sent.envelopeId));
    // Only the placeholder of the one admission: no busy notice, nothing posted for the refusals.
    expect(fake.botMessages(DM).map((m) => m.text)).toEqual(['Working on it...']);
    expect(intake.committed).toHaveLength(1);
  });

  it('tells the person to send it again when even Slack’s last retry finds no room', async () => {
    const intake = new FullForAWhileIntake(undefined);
    const fake = await startSlack(mode, intake);
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'hello while very busy' });
    const told = await fake.waitFor(() => fake.botMessages(DM).find((m) => m.text === INGRESS_TEXTS.busy));
    expect(told.threadTs).toBe(sent.ts);
    expect(deliveriesOf(fake, mode, sent).map((d) => d.retry)).toEqual([0, 1, 2, 3]);
    if (mode === 'http') expect(deliveriesOf(fake, mode, sent).map((d) => ('status' in d ? d.status : 0))).toEqual([503, 503, 503, 200]);
    expect(intake.refused).toBe(1);
    expect(intake.committed).toEqual([]);
  });
});
