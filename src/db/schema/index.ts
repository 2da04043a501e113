export * from './accounts.js';
export * from './agent.js';
export * from './channels.js';
export * from './checkpoints.js';
export * from './goals.js';
export * from './memory.js';
export * from './skills.js';
export * from './webhooks.js';
