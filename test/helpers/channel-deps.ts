import { InProcessIntervalBudget } from '../../src/channel/interval-budget.js';
import { InProcessRateGate } from '../../src/channel/rate-gate.js';
import type { HostedChats } from '../../src/channel/hosted-chats.js';
import { InProcessRequestWindow } from '../../src/channel/request-window.js';
import { InProcessTopic } from '../../src/channel/topic.js';
import type { ChannelDeps, ChannelStateStore, DeliveryClaim, JsonValue, WebhookDeliveries } from '../../src/channel/types.js';

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

/** Adapter state in a Map, for adapter tests within one process. */
export class MemoryChannelState implements ChannelStateStore {
  readonly entries = new Map<string, JsonValue>();

  async get(key: string): Promise<JsonValue | undefined> {
    return this.entries.get(key);
  }

  async set(key: string, value: JsonValue): Promise<void> {
    this.entries.set(key, value);
  }

  async setIfAbsent(key: string, value: JsonValue): Promise<JsonValue> {
    if (!this.entries.has(key)) this.entries.set(key, value);
    return this.entries.get(key) as JsonValue;
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }
}

/** For adapters that host no chat: every call rejects, so a use of it fails its test. */
const NO_HOSTED_CHATS = new Proxy({} as HostedChats, {
  get: (_target, method) => () => Promise.reject(new Error(`hostedChats.${String(method)}: this adapter test has no hosted chats`)),
});

/** What core hands an adapter, for adapter tests: `intake`, `commands` and `logger` are the test's. */
export function testChannelDeps(deps: Pick<ChannelDeps, 'intake' | 'commands' | 'logger'> & Partial<ChannelDeps>): ChannelDeps {
  const now = deps.now ?? Date.now;
  return {
    now,
    deliveries: new MemoryWebhookDeliveries(),
    state: new MemoryChannelState(),
    requestWindow: (_name, perWindow, windowMs) => new InProcessRequestWindow(perWindow, windowMs),
    rateGate: () => new InProcessRateGate({ now }),
    intervalBudget: (_name, intervalMs) => new InProcessIntervalBudget(intervalMs, now),
    hostedChats: NO_HOSTED_CHATS,
    topic: () => new InProcessTopic(),
    agentsDir: '/nonexistent/agents',
    findUserId: async () => undefined,
    ...deps,
  };
}
