import type { ChannelDefinition } from '../src/channel/types.js';
import { githubChannel } from './github/index.js';
import { telegramChannel } from './telegram/index.js';

/** Every platform this build supports. A new platform is one folder plus one line here. */
export const platforms: readonly ChannelDefinition[] = [telegramChannel as ChannelDefinition, githubChannel as ChannelDefinition];
