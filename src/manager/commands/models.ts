import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

export const modelsCommand: Command = {
  name: 'models',
  usage: '/models',
  description: 'List available models',
  async run({ runtime }) {
    const names = runtime.models().map((model) => {
      const traits = [...(model.thinking === undefined ? [] : [`thinking ${model.thinking}`]), ...(model.supports_vision ? ['sees images'] : [])];
      return traits.length === 0 ? model.name : `${model.name} (${traits.join(', ')})`;
    });
    return { reply: names.length === 0 ? MESSAGES.noModels : MESSAGES.modelList(names) };
  },
};
