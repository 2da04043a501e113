import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

export const modelsCommand: Command = {
  name: 'models',
  usage: '/models',
  description: 'List available models',
  async run({ runtime }) {
    const names = runtime.models().map((model) => (model.thinking === undefined ? model.name : `${model.name} (thinking ${model.thinking})`));
    return { reply: names.length === 0 ? MESSAGES.noModels : MESSAGES.modelList(names) };
  },
};
