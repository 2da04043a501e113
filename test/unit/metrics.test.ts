import { describe, expect, it } from 'vitest';
import type { ChannelStatus } from '../../src/channel/types.js';
import { ServerMetrics } from '../../src/metrics.js';

describe('ServerMetrics', () => {
  it('exposes messages, replies and their time per channel, the queue and which channels run', async () => {
    const channels: [string, ChannelStatus][] = [
      ['telegram', { running: true }],
      ['discord', { running: false, standby: true }],
      ['slack', { running: false, reason: 'refused' }],
    ];
    const metrics = new ServerMetrics({
      bus: () => ({ queued: 0, inFlight: 2, refused: 3 }),
      channels: () => channels,
      outbox: async () => ({ pending: 4, dead: 1 }),
    });
    metrics.accepted('telegram');
    metrics.accepted('telegram');
    metrics.duplicate('telegram');
    metrics.answered('telegram', 'ok', 1.5);
    metrics.answered('telegram', 'failed', 0.2);
    metrics.outboxEvent('telegram', 'kept');
    metrics.outboxEvent('telegram', 'dead');
    const { contentType, body } = await metrics.render();
    expect(contentType).toContain('text/plain');
    expect(body).toContain('deerflow_inbound_messages_total{channel="telegram",result="accepted"} 2');
    expect(body).toContain('deerflow_inbound_messages_total{channel="telegram",result="duplicate"} 1');
    expect(body).toContain('deerflow_replies_total{channel="telegram",outcome="ok"} 1');
    expect(body).toContain('deerflow_replies_total{channel="telegram",outcome="failed"} 1');
    expect(body).toContain('deerflow_reply_seconds_bucket{le="2.5",channel="telegram"} 2');
    expect(body).toContain('deerflow_reply_seconds_bucket{le="1",channel="telegram"} 1');
    expect(body).toContain('deerflow_inbound_in_flight 2');
    expect(body).toContain('deerflow_inbound_refused 3');
    expect(body).toContain('deerflow_channel_running{channel="telegram"} 1');
    expect(body).toContain('deerflow_channel_running{channel="discord"} 0.5');
    expect(body).toContain('deerflow_channel_running{channel="slack"} 0');
    expect(body).toContain('deerflow_outbox_events_total{channel="telegram",event="kept"} 1');
    expect(body).toContain('deerflow_outbox_events_total{channel="telegram",event="dead"} 1');
    expect(body).toContain('deerflow_outbox_entries{state="pending"} 4');
    expect(body).toContain('deerflow_outbox_entries{state="dead"} 1');
    expect(body).toContain('deerflow_process_resident_memory_bytes');
  });

  it('keeps two servers in one process apart', async () => {
    const sources = { bus: () => ({ queued: 0, inFlight: 0, refused: 0 }), channels: () => [], outbox: async () => ({ pending: 0, dead: 0 }) };
    const [a, b] = [new ServerMetrics(sources), new ServerMetrics(sources)];
    a.accepted('telegram');
    expect((await b.render()).body).not.toContain('result="accepted"} 1');
  });
});
