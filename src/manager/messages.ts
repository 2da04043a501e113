/** Every text the manager shows a user, in one place (reference §4.11, §5). */
export const MESSAGES = {
  threadBusy: 'This conversation is already processing another request. Please wait for it to finish and try again.',
  internalError: 'An internal error occurred. Please try again.',
  streamError: 'An error occurred while processing your request. Please try again.',
  emptyReply: '(No response from agent)',
  emptyMessage: 'Your message was empty. Send some text and I will answer.',
  shuttingDown: 'The server is restarting and stopped this reply. Please send your message again in a moment.',
  cutShort: (partial: string) => `${partial}\n\n(The server restarted before this answer was finished. Please ask again.)`,
  streamingCursor: ' ▉',
  newConversation: 'New conversation started.',
  noConversation: 'No active conversation.',
  activeThread: (threadId: string) => `Active thread: ${threadId}`,
  noModels: 'No models configured.',
  modelList: (names: string[]) => `Available models:\n${names.map((name) => `• ${name}`).join('\n')}`,
  unknownCommand: (name: string | undefined, available: string[]) =>
    `${name === undefined ? 'Unknown command.' : `Unknown command: /${name}.`} Available commands: ${available.map((c) => `/${c}`).join(' | ')}`,
  helpHeader: 'Available commands:',
} as const;
