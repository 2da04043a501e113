export * from './chat.js';
export * from './server.js';
export * from './display.js';
