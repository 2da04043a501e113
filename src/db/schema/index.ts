export * from './agent.js';
export * from './channels.js';
export * from './checkpoints.js';
