import type { ChannelDeps, DeliveryClaim, WebhookDeliveries } from '../../src/channel/types.js';

/** Deliveries in a Map, for adapter tests that never see a redelivery across processes. */
export class MemoryWebhookDeliveries implements WebhookDeliveries {
  readonly entries = new Map<string, { status: 'processing' | 'done' | 'failed'; summary?: Record<string, unknown> }>();

  async begin(deliveryId: string): Promise<DeliveryClaim> {
    const entry = this.entries.get(deliveryId);
    if (entry?.status === 'done') return { kind: 'done', summary: entry.summary ?? {} };
    if (entry?.status === 'processing') return { kind: 'in_progress' };
    this.entries.set(deliveryId, { status: 'processing' });
    return { kind: 'new' };
  }

  async finish(deliveryId: string, summary: Record<string, unknown>): Promise<void> {
    this.entries.set(deliveryId, { status: 'done', summary });
  }

  async fail(deliveryId: string): Promise<void> {
    this.entries.set(deliveryId, { status: 'failed' });
  }
}

/** What core hands an adapter, for adapter tests: `intake`, `commands` and `logger` are the test's. */
export function testChannelDeps(deps: Pick<ChannelDeps, 'intake' | 'commands' | 'logger'> & Partial<ChannelDeps>): ChannelDeps {
  return {
    now: Date.now,
    deliveries: new MemoryWebhookDeliveries(),
    agentsDir: '/nonexistent/agents',
    findUserId: async () => undefined,
    ...deps,
  };
}
