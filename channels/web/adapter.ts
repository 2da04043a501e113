import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import type { WebConfig } from './config.js';
import { createWebEgress } from './egress.js';
import { createWebFiles } from './files.js';
import { WebIngress } from './ingress.js';
import { WEB_LIMITS } from './limits.js';
import { REPLIES_TOPIC } from './wire.js';
import { webRoutes } from './routes.js';

/** What core needs to know about the web chat, as data. */
export const WEB_CAPABILITIES: ChannelCapabilities = {
  streaming: 'native',
  // Every token reaches the egress, which sends open pages a frame at most every 50 ms.
  minPartialIntervalMs: 0,
  maxMessageChars: WEB_LIMITS.maxMessageChars,
  hasThreads: false,
  files: { maxInboundBytes: 0, maxOutboundBytes: 0 },
  groupTrigger: 'every-message',
  runMode: 'stream',
  // The gateway authenticated the sender: the account is known, there is no chat identity to bind.
  requiresBoundIdentity: false,
};

/**
 * The web chat: the console's chat page, hosted by this server. Its "platform" is the database
 * (`ChannelDeps.hostedChats`) and the gateway (`/api/chat/web`); nothing runs when it starts.
 */
export function createWebChannel(config: WebConfig, deps: ChannelDeps): ChannelAdapter {
  const chats = deps.hostedChats;
  const topic = deps.topic(REPLIES_TOPIC);
  const ingress = new WebIngress({ chats, topic, deps, logger: deps.logger });
  const maxFileBytes = config.max_file_bytes;
  let isRunning = false;
  return {
    name: 'web',
    displayName: 'Web chat',
    capabilities: { ...WEB_CAPABILITIES, files: { maxInboundBytes: maxFileBytes, maxOutboundBytes: maxFileBytes } },
    egress: createWebEgress({ chats, topic, now: deps.now }),
    files: createWebFiles({ chats, topic, maxFileBytes }),
    personRoutes: async (app) => app.register(webRoutes, { chats, topic, ingress, maxFileBytes }),
    start: async () => {
      isRunning = true;
    },
    stop: async () => {
      isRunning = false;
    },
    status: () => ({ running: isRunning }),
  };
}
