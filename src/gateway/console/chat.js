/**
 * The web chat (docs/console.md, channels/web/README.md): a person's conversations with the agent,
 * the reply streaming in as the model writes it, files both ways. Plain DOM, nothing loaded from
 * elsewhere; text from the server always goes in through `textContent` or as text nodes, never
 * as HTML. The agent's answers are Markdown, shown rendered (`markdown.js`); a person's messages
 * show as typed.
 */
import { showMarkdown } from '/console/markdown.js';

/** Shared with the console: signing in on either page signs in on both, for this tab only. */
const KEY_STORAGE = 'deerflow.console.apiKey';
const API = '/api/chat/web';
/** A dropped event stream is opened again after this long. */
const RECONNECT_MS = 2000;

const TEXT = {
  rejected: 'That key was not accepted.',
  unreachable: 'Could not reach the server. Trying again…',
  keyRequired: 'Enter your API key.',
  operator: 'The operator token is not a person: sign in with a user API key to chat.',
  busy: 'The server is too busy to take that message. It was not sent: try again in a moment.',
  notSent: (reason) => `Not sent: ${reason}`,
  untitled: 'New conversation',
  gone: 'This conversation is not on the server any more.',
  chatOff: 'The web chat is turned off on this server (channels.web.enabled).',
  attached: (count) => (count === 0 ? '' : `${count} file${count === 1 ? '' : 's'} attached`),
};

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

const state = {
  key: sessionStorage.getItem(KEY_STORAGE),
  conversationId: null,
  /** message id → { item, text } of what the page shows. */
  shown: new Map(),
  lastId: 0,
  /** The open event stream's controller, or null. */
  stream: null,
};

const byId = (id) => document.getElementById(id);

function say(text) {
  byId('status').textContent = text;
}

function headers(extra = {}) {
  return { ...(state.key ? { authorization: `Bearer ${state.key}` } : {}), ...extra };
}

async function api(path, { method = 'GET', body, raw, type } = {}) {
  let response;
  try {
    response = await fetch(`${API}${path}`, {
      method,
      headers: headers(raw ? { 'content-type': 'application/octet-stream' } : body === undefined ? {} : { 'content-type': 'application/json' }),
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, TEXT.unreachable);
  }
  const data = type === 'blob' && response.ok ? await response.blob() : await response.json().catch(() => null);
  if (!response.ok && response.status !== 503) {
    throw new ApiError(response.status, typeof data?.message === 'string' ? data.message : `The server answered ${response.status}.`);
  }
  return { status: response.status, data };
}

// Session

async function start() {
  try {
    await showConversations();
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      showSignIn(error.status === 403 ? TEXT.operator : state.key ? TEXT.rejected : '');
      return;
    }
    if (error instanceof ApiError && error.status === 404) {
      say(TEXT.chatOff);
      return;
    }
    say(error.message);
    return;
  }
  byId('sign-in').hidden = true;
  byId('chat').hidden = false;
  byId('sign-out').hidden = state.key === null;
  byId('text').focus();
}

function showSignIn(message) {
  state.key = null;
  sessionStorage.removeItem(KEY_STORAGE);
  byId('chat').hidden = true;
  byId('sign-in').hidden = false;
  byId('sign-out').hidden = true;
  say(message);
  byId('api-key').focus();
}

// Conversations

async function showConversations() {
  const { data } = await api('/conversations');
  const list = byId('conversation-list');
  list.replaceChildren();
  for (const conversation of data.conversations) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = conversation.title || TEXT.untitled;
    button.dataset.id = conversation.id;
    if (conversation.id === state.conversationId) button.setAttribute('aria-current', 'true');
    button.addEventListener('click', () => openConversation(conversation.id));
    item.append(button);
    list.append(item);
  }
  if (state.conversationId === null && data.conversations[0]) await openConversation(data.conversations[0].id);
}

async function openConversation(id) {
  state.stream?.abort();
  state.conversationId = id;
  state.shown.clear();
  state.lastId = 0;
  byId('messages').replaceChildren();
  byId('empty').hidden = false;
  for (const button of byId('conversation-list').querySelectorAll('button')) {
    if (button.dataset.id === id) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
  if (id !== null) follow(id);
}

// The event stream

/** Follows the conversation's events until another is opened; a dropped stream is opened again. */
async function follow(id) {
  const controller = new AbortController();
  state.stream = controller;
  while (!controller.signal.aborted) {
    const unfinished = [...state.shown.entries()].filter(([, entry]) => !entry.isFinal).map(([messageId]) => messageId - 1);
    const after = Math.min(state.lastId, ...unfinished);
    try {
      const response = await fetch(`${API}/conversations/${id}/events?after=${after}`, { headers: headers(), signal: controller.signal });
      if (!response.ok || !response.body) throw new ApiError(response.status, `The server answered ${response.status}.`);
      say('');
      await readFrames(response.body, (event, data) => {
        if (event === 'message') showMessage(data);
        else if (event === 'partial') showPartial(data);
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error instanceof ApiError && error.status === 404) {
        say(TEXT.gone);
        return;
      }
      say(TEXT.unreachable);
    }
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}

async function readFrames(body, onFrame) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) onFrame(event, JSON.parse(data));
    }
  }
}

function showMessage(message) {
  byId('empty').hidden = true;
  state.lastId = Math.max(state.lastId, message.id);
  let entry = state.shown.get(message.id);
  if (!entry) {
    const item = document.createElement('li');
    item.dataset.id = String(message.id);
    const text = document.createElement('div');
    text.className = 'text';
    item.append(text);
    byId('messages').append(item);
    entry = { item, text };
    state.shown.set(message.id, entry);
  }
  entry.isFinal = message.is_final;
  entry.item.className = `message ${message.author}${message.is_final ? '' : ' writing'}`;
  entry.item.setAttribute('aria-busy', String(!message.is_final));
  showText(entry.text, message.author, message.text);
  entry.text.hidden = message.text === '';
  if (message.files.length > 0 && !entry.item.querySelector('.files')) entry.item.append(fileList(message.files));
  scrollToEnd();
}

function showPartial({ message_id: id, text }) {
  const entry = state.shown.get(id);
  if (!entry || entry.isFinal) return;
  entry.item.classList.remove('writing');
  showText(entry.text, 'agent', text);
  scrollToEnd();
}

/** The agent writes Markdown; what a person wrote shows exactly as typed. */
function showText(element, author, text) {
  if (author === 'agent') showMarkdown(element, text);
  else element.textContent = text;
}

function scrollToEnd() {
  const list = byId('messages');
  list.scrollTop = list.scrollHeight;
}

/** Files are fetched with the key (a plain link would not carry it) and handed over as blobs. */
function fileList(files) {
  const list = document.createElement('ul');
  list.className = 'files';
  for (const file of files) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = `${file.name} (${formatSize(file.size)})`;
    button.addEventListener('click', () => download(file));
    item.append(button);
    if (file.mime_type.startsWith('image/')) void showImage(item, file);
    list.append(item);
  }
  return list;
}

function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

async function fetchFile(file) {
  const { data } = await api(`/conversations/${state.conversationId}/files/${file.id}`, { type: 'blob' });
  return URL.createObjectURL(data);
}

async function showImage(item, file) {
  try {
    const image = document.createElement('img');
    image.alt = file.name;
    image.src = await fetchFile(file);
    item.append(image);
  } catch {
    // The button still downloads it.
  }
}

async function download(file) {
  try {
    const link = document.createElement('a');
    link.href = await fetchFile(file);
    link.download = file.name;
    link.click();
  } catch (error) {
    say(error.message);
  }
}

// Sending

async function send(event) {
  event.preventDefault();
  const textBox = byId('text');
  const picker = byId('files');
  const text = textBox.value;
  const files = [...picker.files];
  if (text.trim() === '' && files.length === 0) return;
  const button = byId('send');
  button.disabled = true;
  try {
    if (state.conversationId === null) {
      const { data } = await api('/conversations', { method: 'POST', body: { title: text.trim().slice(0, 60) || (files[0]?.name ?? '') } });
      await openConversation(data.conversation.id);
      void showConversations();
    }
    const fileIds = [];
    for (const file of files) {
      const query = `name=${encodeURIComponent(file.name)}&type=${encodeURIComponent(file.type || 'application/octet-stream')}`;
      const { data } = await api(`/conversations/${state.conversationId}/files?${query}`, { method: 'POST', raw: file });
      fileIds.push(data.file.id);
    }
    const { status } = await api(`/conversations/${state.conversationId}/messages`, {
      method: 'POST',
      body: { text, client_message_id: crypto.randomUUID(), file_ids: fileIds },
    });
    say(status === 503 ? TEXT.busy : '');
    textBox.value = '';
    picker.value = '';
    byId('file-names').textContent = '';
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) showSignIn(TEXT.rejected);
    else say(TEXT.notSent(error.message));
  } finally {
    button.disabled = false;
    textBox.focus();
  }
}

byId('composer').addEventListener('submit', send);
byId('text').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) send(event);
});
byId('files').addEventListener('change', () => {
  byId('file-names').textContent = TEXT.attached(byId('files').files.length);
});
byId('new-conversation').addEventListener('click', () => {
  void openConversation(null);
  byId('text').focus();
});
byId('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = byId('api-key').value.trim();
  if (key === '') {
    say(TEXT.keyRequired);
    return;
  }
  state.key = key;
  sessionStorage.setItem(KEY_STORAGE, key);
  byId('api-key').value = '';
  void start();
});
byId('sign-out').addEventListener('click', () => {
  state.stream?.abort();
  showSignIn('');
});

void start();
