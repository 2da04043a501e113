export * from './server.js';
export * from './chat.js';
