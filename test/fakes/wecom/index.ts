export * from './chat.js';
export * from './server.js';
