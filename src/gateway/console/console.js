/**
 * The web console (docs/console.md): sign in with an API key; a user connects chat apps, an
 * operator creates users, grants or revokes their shell, disables, enables, rotates keys and deletes. Plain DOM, no framework, nothing loaded from elsewhere. Text from the
 * server always goes in through `textContent`, never as HTML.
 */

import { KEY_STORAGE, pageLinks } from '/console/shared.js';

/** How often a pending connect asks whether the chat side finished. */
const POLL_INTERVAL_MS = 2000;

const TEXT = {
  rejected: 'That key was not accepted.',
  unreachable: 'Could not reach the server. Try again.',
  expired: 'The code expired. Press Connect for a new one.',
  connected: 'Connected',
  nameRequired: 'Enter a name for the user.',
  keyRequired: 'Enter your API key.',
  shellGranted: 'Granted',
  shellNotGranted: 'Not granted',
  grantShell: 'Grant shell',
  revokeShell: 'Revoke shell',
  grantShellTo: (name) => `Grant shell to ${name}`,
  revokeShellFrom: (name) => `Revoke shell from ${name}`,
  grantedShell: (name) => `Granted the shell to ${name}.`,
  revokedShell: (name) => `Revoked the shell from ${name}.`,
  active: 'Active',
  disabled: 'Disabled',
  disable: 'Disable',
  enable: 'Enable',
  disableUser: (name) => `Disable ${name}`,
  enableUser: (name) => `Enable ${name}`,
  disabledUser: (name) => `Disabled ${name}: their key and chats are refused until enabled.`,
  enabledUser: (name) => `Enabled ${name}.`,
  rotateKey: 'Rotate key',
  rotateKeyFor: (name) => `Rotate key for ${name}`,
  rotatedKey: (name) => `New API key for ${name}; the old one no longer works. Copy the API key now: it is not shown again.`,
  deleteLabel: 'Delete',
  deleteUser: (name) => `Delete ${name}`,
  confirmDelete: (name) => `Confirm delete ${name}`,
  deletedUser: (name) => `Deleted user ${name}.`,
};

const STATUS_LABELS = {
  connected: 'Connected',
  not_connected: 'Not connected',
  revoked: 'Not connected (disconnected)',
};

/** An answer other than 2xx, or no answer (`status` 0). `message` is written for people. */
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

const state = {
  /** The signed-in key, or null. */
  key: null,
  /** provider id → display name, from the last providers answer. */
  displayNames: new Map(),
  /** The running connect poll, or null; a poll that is no longer this one stops. */
  poll: null,
};

const byId = (id) => document.getElementById(id);

function say(text) {
  byId('status').textContent = text;
}

/** Calls the gateway with the signed-in key; resolves with the JSON body (null for 204). */
async function api(path, { method = 'GET', body } = {}) {
  const headers = { authorization: `Bearer ${state.key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'NETWORK', TEXT.unreachable);
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const message = typeof data?.message === 'string' ? data.message : `The server answered ${response.status}.`;
    throw new ApiError(response.status, typeof data?.code === 'string' ? data.code : 'HTTP_ERROR', message);
  }
  return data;
}

/** A rejected key ends the session; anything else is shown and the page stays as it is. */
function report(error) {
  if (error instanceof ApiError && error.status === 401) {
    signOut(TEXT.rejected);
    return;
  }
  say(error instanceof ApiError ? error.message : TEXT.unreachable);
}

/** Disables `button` while `work` runs, so a double press sends one request. */
async function whileBusy(button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    report(error);
  } finally {
    button.disabled = false;
  }
}

function element(tag, { text, className } = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

function formatTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

// Session

async function signIn(key) {
  state.key = key;
  let me;
  try {
    me = await api('/api/me');
  } catch (error) {
    state.key = null;
    sessionStorage.removeItem(KEY_STORAGE);
    if (error instanceof ApiError && error.status === 401) say(TEXT.rejected);
    else report(error);
    return;
  }
  if (!me.is_operator && !me.user) {
    state.key = null;
    sessionStorage.removeItem(KEY_STORAGE);
    say(TEXT.rejected);
    return;
  }
  sessionStorage.setItem(KEY_STORAGE, key);
  byId('page-links').replaceChildren(...pageLinks(me));
  byId('api-key').value = '';
  byId('sign-in').hidden = true;
  byId('sign-out').hidden = false;
  if (me.is_operator) await showOperator();
  else await showUser(me.user);
}

function signOut(message) {
  stopPolling();
  state.key = null;
  state.displayNames.clear();
  sessionStorage.removeItem(KEY_STORAGE);
  byId('page-links').replaceChildren(...pageLinks(null));
  for (const id of ['operator', 'user', 'new-key', 'connect-panel', 'sign-out']) byId(id).hidden = true;
  for (const id of ['providers', 'connections']) byId(id).replaceChildren();
  byId('users').tBodies[0].replaceChildren();
  byId('new-key-value').textContent = '';
  byId('sign-in').hidden = false;
  byId('api-key').focus();
  say(message);
}

// Operator view

async function showOperator() {
  byId('operator').hidden = false;
  byId('operator-title').focus();
  say('Signed in as operator.');
  await loadUsers().catch(report);
}

async function loadUsers() {
  const { users } = await api('/api/users');
  const rows = users.map(userRow);
  byId('users').tBodies[0].replaceChildren(...rows);
  byId('users').hidden = rows.length === 0;
  byId('users-empty').hidden = rows.length > 0;
}

function userRow(user) {
  const row = element('tr');
  const status = element('td', { text: user.disabled ? TEXT.disabled : TEXT.active, className: 'user-status' });
  status.dataset.disabled = String(user.disabled === true);
  const texts = [user.name, user.id, formatTime(user.created_at)].map((text) => element('td', { text }));
  row.append(...texts, status, shellCell(user, row), actionsCell(user, row));
  return row;
}

/** A button of a user's row; `action` lets a rebuilt row give the focus back to its twin. */
function rowButton(text, label, action) {
  const button = element('button', { text });
  button.type = 'button';
  button.dataset.action = action;
  button.setAttribute('aria-label', label);
  return button;
}

/** Runs `work` with `button` busy; a keyboard user keeps the focus, on the rebuilt row's twin when `work` rebuilt it. */
function onPress(button, work) {
  button.addEventListener('click', () => {
    // Disabling the button while busy takes its focus away; a keyboard user gets it back after.
    const hadFocus = document.activeElement === button;
    void whileBusy(button, () => work(hadFocus)).then(() => {
      if (hadFocus && button.isConnected) button.focus();
    });
  });
}

/** Disable or Enable, Rotate key, and Delete, which asks for a second press on "Confirm delete <name>". */
function actionsCell(user, row) {
  const cell = element('td', { className: 'user-actions' });
  const isDisabled = user.disabled === true;
  const toggle = rowButton(isDisabled ? TEXT.enable : TEXT.disable, isDisabled ? TEXT.enableUser(user.name) : TEXT.disableUser(user.name), 'toggle');
  onPress(toggle, (hadFocus) =>
    patchUser(user, { disabled: !isDisabled }, row, { hadFocus, action: 'toggle', done: (u) => (u.disabled ? TEXT.disabledUser(u.name) : TEXT.enabledUser(u.name)) }),
  );
  const rotate = rowButton(TEXT.rotateKey, TEXT.rotateKeyFor(user.name), 'rotate');
  onPress(rotate, async () => {
    const { user: updated, api_key: apiKey } = await api(`/api/users/${encodeURIComponent(user.id)}/rotate-key`, { method: 'POST' });
    showNewKey(updated.name, apiKey);
    say(TEXT.rotatedKey(updated.name));
  });
  const remove = rowButton(TEXT.deleteLabel, TEXT.deleteUser(user.name), 'delete');
  const arm = (isArmed) => {
    remove.textContent = isArmed ? TEXT.confirmDelete(user.name) : TEXT.deleteLabel;
    remove.setAttribute('aria-label', isArmed ? TEXT.confirmDelete(user.name) : TEXT.deleteUser(user.name));
    remove.classList.toggle('danger', isArmed);
  };
  remove.addEventListener('click', () => {
    if (remove.classList.contains('danger')) return void whileBusy(remove, () => deleteUser(user, row));
    arm(true);
    say(`Press "${TEXT.confirmDelete(user.name)}" to delete ${user.name}; this cannot be undone.`);
  });
  // Leaving the button (Tab, a click elsewhere) takes the first press back; not while it is busy deleting.
  remove.addEventListener('blur', () => !remove.disabled && arm(false));
  cell.append(toggle, rotate, remove);
  return cell;
}

/** Removes the row once the server answered; a shown key of that user goes with it. */
async function deleteUser(user, row) {
  await api(`/api/users/${encodeURIComponent(user.id)}`, { method: 'DELETE' });
  row.remove();
  if (byId('new-key-user').textContent === user.name) {
    byId('new-key').hidden = true;
    byId('new-key-value').textContent = '';
  }
  const isEmpty = byId('users').tBodies[0].rows.length === 0;
  byId('users').hidden = isEmpty;
  byId('users-empty').hidden = !isEmpty;
  say(TEXT.deletedUser(user.name));
}

/** Whether `user` may use the shell, and the one button that flips it. */
function shellCell(user, row) {
  const granted = user.can_use_shell === true;
  const cell = element('td', { className: 'shell' });
  const words = element('span', { text: granted ? TEXT.shellGranted : TEXT.shellNotGranted, className: 'shell-state' });
  words.dataset.granted = String(granted);
  const button = rowButton(granted ? TEXT.revokeShell : TEXT.grantShell, granted ? TEXT.revokeShellFrom(user.name) : TEXT.grantShellTo(user.name), 'shell');
  onPress(button, (hadFocus) =>
    patchUser(user, { can_use_shell: !granted }, row, {
      hadFocus,
      action: 'shell',
      done: (u) => (u.can_use_shell ? TEXT.grantedShell(u.name) : TEXT.revokedShell(u.name)),
    }),
  );
  cell.append(words, button);
  return cell;
}

/**
 * PATCHes the user and rebuilds the row from the server's answer rather than from what was
 * asked, so the page never shows a state the server does not hold. The new row's twin of the
 * pressed button takes the focus the old one had, or a keyboard user would be dropped to the top
 * of the page.
 */
async function patchUser(user, body, row, { hadFocus, action, done }) {
  const { user: updated } = await api(`/api/users/${encodeURIComponent(user.id)}`, { method: 'PATCH', body });
  const fresh = userRow(updated);
  row.replaceWith(fresh);
  if (hadFocus) fresh.querySelector(`button[data-action="${action}"]`)?.focus();
  say(done(updated));
}

/** The one place a key is shown: after create and after rotate, once. */
function showNewKey(name, apiKey) {
  byId('new-key-user').textContent = name;
  byId('new-key-value').textContent = apiKey;
  byId('copy-key').hidden = !navigator.clipboard;
  byId('new-key').hidden = false;
}

async function createUser(name) {
  const { user, api_key: apiKey } = await api('/api/users', { method: 'POST', body: { name } });
  byId('user-name').value = '';
  showNewKey(user.name, apiKey);
  say(`Created user ${user.name}. Copy the API key now: it is not shown again.`);
  await loadUsers();
}

// User view

async function showUser(user) {
  byId('user').hidden = false;
  byId('user-name-line').textContent = `Signed in as ${user.name}.`;
  byId('user-title').focus();
  say(`Signed in as ${user.name}.`);
  await refreshUserView().catch(report);
}

async function refreshUserView() {
  const providers = await api('/api/channels/providers');
  byId('connections-disabled').hidden = providers.enabled;
  byId('providers-block').hidden = !providers.enabled;
  byId('connections-block').hidden = !providers.enabled;
  if (!providers.enabled) {
    stopPolling();
    byId('connect-panel').hidden = true;
    return;
  }
  state.displayNames = new Map(providers.providers.map((p) => [p.provider, p.display_name]));
  byId('providers').replaceChildren(...providers.providers.map(providerCard));
  const { connections } = await api('/api/channels/connections');
  const active = connections.filter((c) => c.status === 'connected');
  byId('connections').replaceChildren(...active.map(connectionCard));
  byId('connections-empty').hidden = active.length > 0;
}

function providerCard(provider) {
  const card = element('li', { className: 'card' });
  const status = element('span', { text: STATUS_LABELS[provider.connection_status] ?? provider.connection_status, className: 'state' });
  status.dataset.status = provider.connection_status;
  const button = element('button', { text: 'Connect' });
  button.type = 'button';
  button.setAttribute('aria-label', `Connect ${provider.display_name}`);
  card.append(element('span', { text: provider.display_name, className: 'name' }), status, button);
  if (provider.connectable) {
    button.addEventListener('click', () => whileBusy(button, () => connect(provider)));
  } else {
    button.disabled = true;
    const reason = element('span', { text: provider.unavailable_reason ?? 'Not available on this server.', className: 'reason' });
    reason.id = `reason-${provider.provider}`;
    button.setAttribute('aria-describedby', reason.id);
    card.append(reason);
  }
  return card;
}

function connectionCard(connection) {
  const display = state.displayNames.get(connection.provider) ?? connection.provider;
  const account = connection.external_account_name ?? connection.external_account_id;
  // A workspace id alone (a Telegram chat id, a Slack team id) means nothing to people; only names show.
  const where = connection.workspace_name;
  const card = element('li', { className: 'card' });
  const details = element('span', { text: where ? `${account} in ${where}` : account, className: 'account' });
  const since = element('span', { text: `since ${formatTime(connection.created_at)}`, className: 'since' });
  const button = element('button', { text: 'Disconnect' });
  button.type = 'button';
  button.setAttribute('aria-label', `Disconnect ${display} account ${account}`);
  button.addEventListener('click', () =>
    whileBusy(button, async () => {
      await api(`/api/channels/connections/${encodeURIComponent(connection.id)}`, { method: 'DELETE' });
      say(`Disconnected ${display} account ${account}.`);
      await refreshUserView();
    }),
  );
  card.append(element('span', { text: display, className: 'name' }), details, since, button);
  return card;
}

// Connecting

function stopPolling() {
  if (state.poll) clearTimeout(state.poll.timer);
  state.poll = null;
}

/**
 * Asks for a code, shows it, then polls the connections every 2 s until one of this provider is
 * connected and changed since the press, or the code expires. "Changed" compares `updated_at`
 * with the list fetched at the press rather than with this browser's clock, which may be off.
 */
async function connect(provider) {
  stopPolling();
  byId('connect-panel').hidden = true;
  const { connections: before } = await api('/api/channels/connections');
  const seen = new Map(before.map((c) => [c.id, c.updated_at]));
  const startedAt = Date.now();
  const answer = await api(`/api/channels/${encodeURIComponent(provider.provider)}/connect`, { method: 'POST', body: {} });
  const deadline = startedAt + answer.expires_in * 1000;
  showCode(provider, answer);

  const poll = { timer: 0 };
  state.poll = poll;
  const tick = async () => {
    let connections = null;
    let failure = null;
    try {
      ({ connections } = await api('/api/channels/connections'));
    } catch (error) {
      failure = error;
    }
    // Signed out, or Connect pressed again, while this request ran.
    if (state.poll !== poll) return;
    // A 401 ends the session; a passing network or server error only skips this round.
    if (failure instanceof ApiError && failure.status === 401) return report(failure);
    const done = connections?.find((c) => c.provider === provider.provider && c.status === 'connected' && seen.get(c.id) !== c.updated_at);
    if (done) return finishConnect(provider);
    if (Date.now() >= deadline) return expireCode();
    poll.timer = setTimeout(tick, POLL_INTERVAL_MS);
  };
  poll.timer = setTimeout(tick, POLL_INTERVAL_MS);
}

function showCode(provider, answer) {
  byId('connect-title').textContent = `Connect ${provider.display_name}`;
  byId('connect-instruction').textContent = answer.instruction;
  byId('connect-code').textContent = answer.code;
  // Only web links: a `javascript:` URL from a misconfigured server must not become clickable.
  const hasLink = answer.mode === 'deep_link' && typeof answer.url === 'string' && /^https?:\/\//i.test(answer.url);
  const linkLine = byId('connect-link-line');
  linkLine.replaceChildren();
  if (hasLink) {
    const link = element('a', { text: `Open ${provider.display_name}` });
    link.id = 'connect-link';
    link.href = answer.url;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    linkLine.append(link);
  }
  linkLine.hidden = !hasLink;
  setCodeVisible(true);
  byId('connect-state').textContent = `Waiting for ${provider.display_name}…`;
  byId('connect-panel').hidden = false;
  byId('connect-panel').focus();
  say(`Your ${provider.display_name} code is ready. Waiting for ${provider.display_name}…`);
}

function setCodeVisible(isVisible) {
  byId('connect-code').parentElement.hidden = !isVisible;
  byId('connect-instruction').hidden = !isVisible;
  if (!isVisible) byId('connect-link-line').hidden = true;
}

async function finishConnect(provider) {
  stopPolling();
  setCodeVisible(false);
  byId('connect-state').textContent = TEXT.connected;
  say(`${TEXT.connected}: ${provider.display_name}.`);
  await refreshUserView().catch(report);
}

function expireCode() {
  stopPolling();
  setCodeVisible(false);
  byId('connect-state').textContent = TEXT.expired;
  say(TEXT.expired);
}

// Wiring

function start() {
  byId('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = byId('api-key').value.trim();
    if (!key) return say(TEXT.keyRequired);
    const button = event.submitter ?? byId('sign-in-form').querySelector('button');
    void whileBusy(button, () => signIn(key));
  });
  byId('sign-out').addEventListener('click', () => signOut('Signed out.'));
  byId('create-user-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const name = byId('user-name').value.trim();
    if (!name) return say(TEXT.nameRequired);
    const button = event.submitter ?? byId('create-user-form').querySelector('button');
    void whileBusy(button, () => createUser(name));
  });
  byId('copy-key').addEventListener('click', () => {
    navigator.clipboard.writeText(byId('new-key-value').textContent).then(
      () => say('Key copied.'),
      () => say('Could not copy; select the key and copy it by hand.'),
    );
  });
  const stored = sessionStorage.getItem(KEY_STORAGE);
  if (stored) void signIn(stored);
}

start();
