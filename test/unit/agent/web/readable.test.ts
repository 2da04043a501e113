import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readablePage, UnreadablePageError } from '../../../../src/agent/web/readable.js';

const PAGE_URL = 'https://blog.example.com/posts/streaming-parsers';

function html(body: string, contentType = 'text/html; charset=utf-8') {
  return { body: Buffer.from(body), contentType, url: PAGE_URL, maxChars: 20_000 };
}

const paragraph = (topic: string) =>
  `<p>The ${topic} section explains why streaming parsers   matter for
  large documents: they read input as it arrives, keep memory flat, and let the caller stop early when it has enough.</p>`;

const ARTICLE_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Streaming parsers in practice | Example Blog</title>
  <script>window.tracker = "TRACKER_SCRIPT_TEXT";</script>
  <style>.sidebar { color: red }</style>
</head>
<body>
  <header class="site-header"><nav class="menu"><a href="/">NAV_HOME</a> <a href="/about">NAV_ABOUT</a></nav></header>
  <div class="ad-banner sponsored">ADVERT_TEXT buy now</div>
  <main>
    <article>
      <h1>Streaming parsers in practice</h1>
      <p class="byline">By Ada</p>
      ${paragraph('introduction')}
      <h2>Why they matter</h2>
      ${paragraph('motivation')}
      <p>Read <a href="/docs/parser">the parser guide</a> or <a href="https://example.org/">https://example.org/</a> for more.</p>
      <h3>Benefits</h3>
      <ul>
        <li>Low memory use</li>
        <li>Early <strong>results</strong></li>
      </ul>
      <pre><code>for await (const chunk of stream) {
  parser.write(chunk);
}</code></pre>
      ${paragraph('conclusion')}
    </article>
  </main>
  <aside class="sidebar">SIDEBAR_TEXT</aside>
  <footer>FOOTER_TEXT © 2024</footer>
  <script>document.write("BODY_SCRIPT_TEXT")</script>
</body>
</html>`;

describe('readablePage', () => {
  describe('an article', () => {
    const page = readablePage(html(ARTICLE_PAGE));

    it('keeps the article and its title', () => {
      expect(page.title).toBe('Streaming parsers in practice | Example Blog');
      expect(page.truncated).toBe(false);
      expect(page.text).toContain(
        'The motivation section explains why streaming parsers matter for large documents: they read input as it arrives',
      );
    });

    it('writes headings, list items, links and code with their structure', () => {
      expect(page.text).toMatch(/^## Why they matter$/m);
      expect(page.text).toMatch(/^### Benefits$/m);
      expect(page.text).toContain('- Low memory use\n- Early results');
      expect(page.text).toContain('the parser guide (https://blog.example.com/docs/parser)');
      // A link whose label is its address is not written twice.
      expect(page.text).toContain('or https://example.org/ for more.');
      expect(page.text).toContain('for await (const chunk of stream) {\n  parser.write(chunk);\n}');
    });

    it('separates paragraphs with a blank line', () => {
      expect(page.text).toMatch(/early when it has enough\.\n\n## Why they matter\n\nThe motivation section/);
    });

    it('leaves out navigation, ads, the sidebar, scripts, styles and the footer', () => {
      for (const noise of ['NAV_HOME', 'NAV_ABOUT', 'ADVERT_TEXT', 'SIDEBAR_TEXT', 'TRACKER_SCRIPT_TEXT', 'BODY_SCRIPT_TEXT', 'FOOTER_TEXT', 'color: red']) {
        expect(page.text).not.toContain(noise);
      }
    });
  });

  it('reads the whole body of a page that is not an article, less scripts, styles, navigation and footer', () => {
    const page = readablePage(
      html(`<html><head><title>Status board</title><style>body{}</style></head><body>
        <nav><a href="/x">NAV_LINK</a></nav>
        <div><h1>Services</h1><span>All systems</span> <b>operational</b>
          <ul><li>API: up</li><li>Web: up</li></ul>
          <a href="https://status.example.com/history">History</a>
        </div>
        <footer>FOOTER_TEXT</footer><script>SCRIPT_TEXT()</script>
      </body></html>`),
    );
    expect(page.title).toBe('Status board');
    expect(page.text).toBe('# Services\n\nAll systems operational\n\n- API: up\n- Web: up\n\nHistory (https://status.example.com/history)');
  });

  it('writes ordered and nested lists, tables and quotes', () => {
    const page = readablePage(
      html(`<div>
        <ol start="3"><li>Third</li><li>Fourth<ul><li>Detail</li></ul></li></ol>
        <table><tr><th>Name</th><th>Size</th></tr><tr><td>a.txt</td><td>12 KB</td></tr></table>
        <blockquote><p>Quoted line.</p></blockquote>
      </div>`),
    );
    expect(page.text).toBe('3. Third\n4. Fourth\n   - Detail\n\nName | Size\na.txt | 12 KB\n\n> Quoted line.');
  });

  it('resolves links against <base href>, and leaves links within the page and javascript: links as their label', () => {
    const page = readablePage(
      html(`<html><head><base href="https://docs.example.net/v2/"></head><body>
        <p><a href="guide.html">Guide</a>, <a href="#top">back to top</a>, <a href="javascript:void(0)">menu</a>.</p>
      </body></html>`),
    );
    expect(page.text).toBe('Guide (https://docs.example.net/v2/guide.html), back to top, menu.');
  });

  it('keeps the text after a commented-out script', () => {
    const page = readablePage(html('<p>before</p><!-- <script> --><p>after</p><script>var hidden = "</p>";</script><p>end</p>'));
    expect(page.text).toBe('before\n\nafter\n\nend');
  });

  it('parses at most 200 KB of HTML, and says the page went on', () => {
    const section = (i: number) => `<h2>Section ${i}</h2><p>${'Words of a long reference page. '.repeat(30)}</p>`;
    const body = `<html><head><title>Reference</title></head><body>${Array.from({ length: 700 }, (_, i) => section(i)).join('')}</body></html>`;
    expect(body.length).toBeGreaterThan(300_000);
    const page = readablePage({ ...html(body), maxChars: 10_000_000 });
    expect(page.truncated).toBe(true);
    expect(page.text).toContain('Section 0');
    expect(page.text).not.toContain('Section 699');
  });

  it('decodes the charset it is given', () => {
    const latin1 = Buffer.from("<html><head><title>Caf\u00e9</title></head><body><p>Un caf\u00e9 cr\u00e8me, s'il vous pla\u00eet.</p></body></html>", 'latin1');
    expect(latin1.includes(0xe9)).toBe(true);
    const page = readablePage({ body: latin1, contentType: 'text/html', charset: 'iso-8859-1', url: PAGE_URL, maxChars: 1000 });
    expect(page.title).toBe('Café');
    expect(page.text).toContain("Un café crème, s'il vous plaît.");
  });

  it('reads the charset from the content type or a meta tag, and falls back to utf-8 for an unknown one', () => {
    const latin1 = Buffer.from('<p>d\u00e9j\u00e0 vu</p>', 'latin1');
    expect(readablePage({ ...html(''), body: latin1, contentType: 'text/html; charset=ISO-8859-1' }).text).toBe('déjà vu');
    const withMeta = Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>\u00e9t\u00e9</p></body></html>', 'latin1');
    expect(readablePage({ ...html(''), body: withMeta, contentType: 'text/html' }).text).toBe('été');
    const utf8 = Buffer.from('<p>naïve</p>');
    expect(readablePage({ ...html(''), body: utf8, contentType: 'text/html', charset: 'no-such-charset' }).text).toBe('naïve');
  });

  it('pretty-prints JSON', () => {
    const page = readablePage({ body: Buffer.from('{"name":"parser","tags":["fast","small"]}'), contentType: 'application/json', url: PAGE_URL, maxChars: 1000 });
    expect(page).toEqual({ title: '', text: '{\n  "name": "parser",\n  "tags": [\n    "fast",\n    "small"\n  ]\n}', truncated: false });
  });

  it('returns JSON that does not parse as it is', () => {
    const page = readablePage({ body: Buffer.from('{"broken": '), contentType: 'application/json', url: PAGE_URL, maxChars: 1000 });
    expect(page.text).toBe('{"broken": ');
  });

  it('passes plain text, markdown and CSV through as they are', () => {
    const text = 'line one\n\n  indented <b>not html</b>\n';
    for (const contentType of ['text/plain', 'text/markdown; charset=utf-8', 'text/csv']) {
      expect(readablePage({ body: Buffer.from(text), contentType, url: PAGE_URL, maxChars: 1000 })).toEqual({ title: '', text, truncated: false });
    }
  });

  it('cuts at a paragraph boundary near maxChars and says so', () => {
    const paragraphs = Array.from({ length: 10 }, (_, i) => `Paragraph ${i} ${'x'.repeat(80)}.`);
    const text = paragraphs.join('\n\n');
    const page = readablePage({ body: Buffer.from(text), contentType: 'text/plain', url: PAGE_URL, maxChars: 300 });
    expect(page.truncated).toBe(true);
    expect(page.text.length).toBeLessThanOrEqual(300);
    expect(page.text.length).toBeGreaterThanOrEqual(240);
    expect(page.text).toBe(paragraphs.slice(0, 3).join('\n\n'));
  });

  it('cuts hard at maxChars when no boundary is near', () => {
    const page = readablePage({ body: Buffer.from('y'.repeat(1000)), contentType: 'text/plain', url: PAGE_URL, maxChars: 123 });
    expect(page).toEqual({ title: '', text: 'y'.repeat(123), truncated: true });
  });

  it('never returns more than maxChars of an HTML page', () => {
    const page = readablePage({ ...html(ARTICLE_PAGE), maxChars: 200 });
    expect(page.truncated).toBe(true);
    expect(page.text.length).toBeLessThanOrEqual(200);
  });

  it('refuses images, PDFs and binaries with a sentence the model can read', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect(() => readablePage({ body: png, contentType: 'image/png', url: PAGE_URL, maxChars: 1000 })).toThrow(UnreadablePageError);
    expect(() => readablePage({ body: Buffer.from('%PDF-1.7'), contentType: 'application/pdf', url: PAGE_URL, maxChars: 1000 })).toThrow(
      'application/pdf pages cannot be read as text',
    );
    // No content type at all: sniffed, as a browser would.
    expect(() => readablePage({ body: png, contentType: '', url: PAGE_URL, maxChars: 1000 })).toThrow(UnreadablePageError);
    expect(readablePage({ body: Buffer.from('just words'), contentType: '', url: PAGE_URL, maxChars: 1000 }).text).toBe('just words');
  });

  it('does not throw on malformed HTML', () => {
    const malformed = [
      '<html><body><div><p>Unclosed <b>bold <i>italic <a href="http://[bad">broken link<ul><li>one<li>two</table></span>',
      '<<<>>></p></div><script>never closed',
      `<!doctype html><html><body>${'<div>'.repeat(20_000)}deep text`,
      '',
    ];
    for (const body of malformed) {
      expect(() => readablePage({ ...html(body), maxChars: 5000 })).not.toThrow();
    }
    const deep = readablePage({ ...html(malformed[2] ?? ''), maxChars: 5000 });
    expect(deep.text).toContain('deep text');
    const unclosed = readablePage({ ...html(malformed[0] ?? ''), maxChars: 5000 });
    expect(unclosed.text).toContain('broken link');
  });

  it('does not throw on random bytes served as HTML', () => {
    // Deterministic, so a failure can be replayed.
    const random = Buffer.concat(Array.from({ length: 625 }, (_, i) => createHash('sha256').update(String(i)).digest()));
    const page = readablePage({ body: random, contentType: 'text/html', url: PAGE_URL, maxChars: 1000 });
    expect(page.text.length).toBeLessThanOrEqual(1000);
    expect(page.text).not.toContain('\u0000');
  });
});
