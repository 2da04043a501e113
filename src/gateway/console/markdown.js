/**
 * The agent's Markdown as the chat page shows it (issue #20): marked's lexer (served from this
 * server at /console/marked.js, the same release the adapters render with) read into DOM nodes.
 * Every character of the answer goes in as a text node, never as HTML: raw HTML and entities in
 * the answer show as written, and a link is made only for http(s) and mailto targets.
 */
import { Lexer } from '/console/marked.js';

const LINKABLE = /^(?:https?:|mailto:)/i;

/** Replaces what `element` shows with `markdown`, rendered. */
export function showMarkdown(element, markdown) {
  element.replaceChildren(...blocks(new Lexer({ gfm: true }).lex(markdown)));
}

function blocks(tokens) {
  return tokens.flatMap(block);
}

function block(token) {
  switch (token.type) {
    case 'space':
    case 'def':
      return [];
    case 'paragraph':
      return [element('p', inline(token.tokens))];
    case 'text':
      // A tight list item's text.
      return token.tokens ? inline(token.tokens) : [text(token.raw)];
    case 'heading':
      // Inside a message, a heading is a strong line rather than a page-sized title.
      return [element('p', [element('strong', inline(token.tokens))])];
    case 'code':
      return [element('pre', [element('code', [text(token.text)])])];
    case 'blockquote':
      return [element('blockquote', blocks(token.tokens))];
    case 'list':
      return [list(token)];
    case 'table':
      return [table(token)];
    case 'hr':
      return [element('hr', [])];
    default:
      // HTML blocks and anything newer than this page: the characters as written.
      return [element('p', [text(token.raw.replace(/\n+$/, ''))])];
  }
}

function list(token) {
  const node = element(
    token.ordered ? 'ol' : 'ul',
    token.items.map((item) => {
      const box = item.task ? [text(item.checked ? '☑ ' : '☐ ')] : [];
      return element('li', [...box, ...blocks(item.tokens.filter((t) => t.type !== 'checkbox'))]);
    }),
  );
  if (token.ordered && typeof token.start === 'number' && token.start !== 1) node.start = token.start;
  return node;
}

function table(token) {
  const row = (cells, tag) => element('tr', cells.map((cell, i) => {
    const node = element(tag, inline(cell.tokens));
    if (token.align[i]) node.style.textAlign = token.align[i];
    return node;
  }));
  return element('table', [element('thead', [row(token.header, 'th')]), element('tbody', token.rows.map((cells) => row(cells, 'td')))]);
}

function inline(tokens = []) {
  return tokens.flatMap((token) => {
    switch (token.type) {
      case 'text':
        // `raw`: marked decodes character references in `text`, and they are text here.
        return token.tokens ? inline(token.tokens) : [text(token.raw)];
      case 'escape':
        return [text(token.text)];
      case 'strong':
        return [element('strong', inline(token.tokens))];
      case 'em':
        return [element('em', inline(token.tokens))];
      case 'del':
        return [element('del', inline(token.tokens))];
      case 'codespan':
        return [element('code', [text(token.text)])];
      case 'br':
        return [element('br', [])];
      case 'link':
        return [link(token.href, inline(token.tokens))];
      case 'image':
        // Pictures from elsewhere are not loaded (the page's policy): a link to it.
        return [link(token.href, [text(token.text || token.href)])];
      default:
        return [text(token.raw)];
    }
  });
}

function link(href, children) {
  if (!LINKABLE.test(href)) return element('span', [...children, text(` (${href})`)]);
  const node = element('a', children);
  node.href = href;
  node.rel = 'noopener noreferrer';
  node.target = '_blank';
  return node;
}

function element(tag, children) {
  const node = document.createElement(tag);
  node.append(...children);
  return node;
}

function text(value) {
  return document.createTextNode(value);
}
