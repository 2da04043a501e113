/**
 * What every console page shares (docs/console.md): the signed-in key, the API call, the page
 * list and its navigation, and the few DOM helpers. Plain DOM, no framework, nothing loaded from
 * elsewhere. Text from the server always goes in through `textContent`, never as HTML.
 *
 * A page is one module in `pages/<name>.js`, served at `/console/<name>` inside the same shell
 * (`page.html`): it calls `startPage` with a function that fills the page's `<div id="page">`.
 */

/** sessionStorage key: the API key lives only as long as this tab (every page of it). */
export const KEY_STORAGE = 'deerflow.console.apiKey';

export const TEXT = {
  rejected: 'That key was not accepted.',
  unreachable: 'Could not reach the server. Try again.',
  operatorOnly: 'This page is for the operator. Sign in with the operator token to see it.',
  usersOnly: 'This page shows a person’s own things. Sign in with your API key to see it.',
};

/**
 * Every page, in the order the navigation shows them. `audience` says who sees the link and may
 * open the page: `operator`; `user` (a person with an API key, or anyone when keys are off);
 * `signed-in` (either: a person sees their own things, the operator everyone's); `anyone`, also
 * before signing in (the chat signs in by itself).
 * `path` `/` is the sign-in page (`index.html`); `/chat` is the web chat.
 */
export const PAGES = [
  { path: '/console/health', title: 'Health', audience: 'operator' },
  { path: '/console/charts', title: 'Charts', audience: 'operator' },
  { path: '/console/conversations', title: 'Conversations', audience: 'signed-in' },
  { path: '/chat', title: 'Chat', audience: 'anyone' },
  { path: '/console/memory', title: 'Memory', audience: 'signed-in' },
  { path: '/console/goals', title: 'Goals', audience: 'signed-in' },
  { path: '/console/schedules', title: 'Schedules', audience: 'signed-in' },
  { path: '/', title: 'Connections', audience: 'user' },
  { path: '/console/runs', title: 'Runs', audience: 'operator' },
  { path: '/console/outbox', title: 'Outbox', audience: 'operator' },
  { path: '/console/audit', title: 'Audit', audience: 'operator' },
  { path: '/', title: 'Users', audience: 'operator' },
  { path: '/console/agents', title: 'Agents', audience: 'operator' },
  { path: '/console/skills', title: 'Skills', audience: 'operator' },
];

/** An answer other than 2xx, or no answer (`status` 0). `message` is written for people. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export const byId = (id) => document.getElementById(id);

/** The signed-in key, or null. */
export function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

/** Writes `text` into the page's aria-live status line, where every outcome is reported. */
export function say(text) {
  byId('status').textContent = text;
}

/** Calls the gateway with the signed-in key; resolves with the JSON body (null for 204). */
export async function api(path, { method = 'GET', body, key = storedKey() } = {}) {
  const headers = {};
  if (key) headers.authorization = `Bearer ${key}`;
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

/** A rejected key sends the tab back to sign-in; anything else is shown and the page stays as it is. */
export function report(error) {
  if (error instanceof ApiError && error.status === 401) {
    sessionStorage.removeItem(KEY_STORAGE);
    window.location.assign('/');
    return;
  }
  say(error instanceof ApiError ? error.message : TEXT.unreachable);
}

/** Disables `button` while `work` runs, so a double press sends one request; errors are reported. */
export async function whileBusy(button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    report(error);
  } finally {
    button.disabled = false;
  }
}

/** A new element with its text (never HTML) and class. */
export function element(tag, { text, className } = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

/** A `type="button"` button; `label` names it for assistive technology when the text alone is ambiguous. */
export function button(text, onClick, { label } = {}) {
  const node = element('button', { text });
  node.type = 'button';
  if (label !== undefined) node.setAttribute('aria-label', label);
  node.addEventListener('click', () => void whileBusy(node, () => onClick(node)));
  return node;
}

/**
 * A button that acts only on its second press, for what cannot be undone: the first press puts
 * `confirmText` on the button itself (and `data-armed`), so the person reads what the next press does.
 */
export function confirmingButton(text, confirmText, onConfirm, { label } = {}) {
  let isArmed = false;
  const node = button(
    text,
    async () => {
      if (isArmed) return onConfirm();
      isArmed = true;
      node.textContent = confirmText;
      node.dataset.armed = 'true';
    },
    { label },
  );
  return node;
}

/** A table with a caption, column headers and one row per item (`cells(item)` gives the row's cells: strings or nodes). */
export function table(caption, headers, items, cells) {
  const node = element('table');
  node.append(element('caption', { text: caption }));
  const head = element('tr');
  for (const header of headers) {
    const th = element('th', { text: header });
    th.scope = 'col';
    head.append(th);
  }
  node.createTHead().append(head);
  const body = node.createTBody();
  for (const item of items) {
    const row = element('tr');
    for (const cell of cells(item)) {
      const td = element('td');
      if (cell instanceof Node) td.append(cell);
      else td.textContent = cell ?? '';
      row.append(td);
    }
    body.append(row);
  }
  return node;
}

/** Rows per page for a paged list: `?per_page=` of the page's address when it is 1 to 200, else `fallback`. */
export function pageSize(fallback) {
  const asked = Number(new URLSearchParams(window.location.search).get('per_page'));
  return Number.isInteger(asked) && asked >= 1 && asked <= 200 ? asked : fallback;
}

export function formatTime(iso) {
  if (iso === null || iso === undefined) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** Whether `page` is for whoever `me` (the `/api/me` answer; null before sign-in) is. */
function isFor(page, me) {
  if (me === null) return page.audience === 'anyone';
  // A server without keys (\`open\`) has no operator or person to tell apart: every page is for whoever can reach it.
  if (page.audience === 'anyone' || page.audience === 'signed-in' || me.open === true) return true;
  return page.audience === 'operator' ? me.is_operator : !me.is_operator;
}

/** Links to the pages `me` may open (null: signed out), the current one marked. */
export function pageLinks(me) {
  return PAGES.filter((page) => isFor(page, me)).map((page) => {
    const link = element('a', { text: page.title });
    link.href = page.path;
    if (page.path === window.location.pathname) link.setAttribute('aria-current', 'page');
    return link;
  });
}

/** Fills the bar's `<nav>` with the pages `me` may open and a sign-out button. */
export function renderNav(me) {
  const nav = byId('nav');
  const links = pageLinks(me);
  const signOut = element('button', { text: 'Sign out' });
  signOut.type = 'button';
  signOut.id = 'sign-out';
  signOut.addEventListener('click', () => {
    sessionStorage.removeItem(KEY_STORAGE);
    window.location.assign('/');
  });
  nav.replaceChildren(...links, signOut);
}

/**
 * Runs one console page: asks the server who the stored key is (none: back to sign-in, where a
 * server without keys signs in by itself), refuses a page that is not for them, draws the
 * navigation, and hands `render` the page's container and the `/api/me` answer.
 *
 * @param page.path the page's own path, as in `PAGES`.
 * @param page.render `(container, me) => Promise<void>`; what it throws is reported.
 */
export async function startPage({ path, render }) {
  const page = PAGES.find((entry) => entry.path === path);
  if (page) document.title = `${page.title} · DeerFlow console`;
  let me;
  try {
    me = await api('/api/me');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      sessionStorage.removeItem(KEY_STORAGE);
      window.location.assign('/');
      return;
    }
    report(error);
    return;
  }
  renderNav(me);
  if (page && !isFor(page, me)) {
    say(me.is_operator ? TEXT.usersOnly : TEXT.operatorOnly);
    return;
  }
  const container = byId('page');
  if (page) {
    const heading = element('h2', { text: page.title });
    heading.tabIndex = -1;
    container.replaceChildren(heading);
  }
  try {
    await render(container, me);
  } catch (error) {
    report(error);
  }
}
