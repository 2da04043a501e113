/**
 * The round-trip table (issue #20): what a person types, and what the chat must show once the
 * model has echoed it back as its answer. The contract suite types each `typed` in a private chat,
 * checks the intake received exactly `typed` (inbound decoding undid the platform's encoding),
 * finishes the reply with that text as the agent's Markdown, and compares what the fake platform
 * displays (`BotMessageView.shown`) with `shown`, character for character.
 *
 * `shown` is the visible text in one canonical form every fake reduces its platform's rendering
 * to, so one expectation serves every platform:
 * - emphasis, strike-through and inline code show their inner text;
 * - a code block shows its lines, without the fence;
 * - a link shows its label (the fake records where it points in `BotMessageView.links`);
 * - a list item shows as `• item` (unordered) or `1. item` (ordered), indented two spaces per
 *   level of nesting, whether the platform draws the list or the adapter wrote the bullets;
 * - a table shows as its cells padded to the widest cell of each column, `| a | b |` rows, with
 *   the header rule as dashes (the monospace form a platform without tables gets in a code block).
 *
 * A platform that cannot show a case this way declares, in its descriptor, what it shows instead
 * and the platform rule that makes it so.
 */

export interface RoundTripCase {
  name: string;
  /** The characters the person types. */
  typed: string;
  /** What the chat shows after the model echoes `typed` as Markdown. */
  shown: string;
  /** Native links the shown text must carry, label → target. */
  links?: readonly { text: string; url: string }[];
}

/** A word-broken line of exactly `length` characters, unrepeated enough that a lost or moved piece shows. */
function longLine(length: number): string {
  const words: string[] = [];
  for (let i = 0; words.join(' ').length < length; i++) words.push(`w${i.toString(36)}`);
  return words.join(' ').slice(0, length);
}

const TABLE_TYPED = '| name | qty |\n|---|---|\n| apple | 3 |\n| kiwi & <lime> | 12 |';
const TABLE_SHOWN = '| name          | qty |\n| ------------- | --- |\n| apple         | 3   |\n| kiwi & <lime> | 12  |';

export const ROUND_TRIP_CASES: readonly RoundTripCase[] = [
  { name: 'HTML-like text', typed: '<b>not bold</b> <script>alert(1)</script> <br/>', shown: '<b>not bold</b> <script>alert(1)</script> <br/>' },
  { name: 'entities typed literally', typed: 'Tom &amp; Jerry &lt;3 &#39;quoted&#39; &nbsp;', shown: 'Tom &amp; Jerry &lt;3 &#39;quoted&#39; &nbsp;' },
  {
    name: 'a shell snippet',
    typed: 'compare 1 < 2 && 3 > 2; ls -la > out.txt 2>&1 | grep -v "x" & echo $HOME',
    shown: 'compare 1 < 2 && 3 > 2; ls -la > out.txt 2>&1 | grep -v "x" & echo $HOME',
  },
  {
    name: 'markup characters that are not markup',
    typed: 'snake_case_name, a * b = c, x | y, 5 > 3 < 4, the ` key, ~/bin, ~5 min',
    shown: 'snake_case_name, a * b = c, x | y, 5 > 3 < 4, the ` key, ~/bin, ~5 min',
  },
  { name: 'emoji', typed: 'ship it 🚀👍🏽 👨‍👩‍👧‍👦 ❤️ 🇯🇵', shown: 'ship it 🚀👍🏽 👨‍👩‍👧‍👦 ❤️ 🇯🇵' },
  { name: 'CJK', typed: '你好，世界！こんにちは 안녕하세요 「引用」', shown: '你好，世界！こんにちは 안녕하세요 「引用」' },
  { name: 'right-to-left text', typed: 'مرحبا بالعالم and שלום עולם mixed', shown: 'مرحبا بالعالم and שלום עולם mixed' },
  { name: 'a 4,000-character line', typed: longLine(4000), shown: longLine(4000) },
  { name: 'emphasis and inline code', typed: 'this is **bold**, _italic_ and `a && b < c`', shown: 'this is bold, italic and a && b < c' },
  {
    name: 'a link',
    typed: 'read [the docs](https://example.com/a_b?x=1&y=2) first',
    shown: 'read the docs first',
    links: [{ text: 'the docs', url: 'https://example.com/a_b?x=1&y=2' }],
  },
  {
    name: 'nested lists',
    typed: '- fruit\n  - apple\n  - pear\n- veg\n\n1. one\n2. two',
    shown: '• fruit\n  • apple\n  • pear\n• veg\n\n1. one\n2. two',
  },
  { name: 'a table', typed: TABLE_TYPED, shown: TABLE_SHOWN },
  {
    name: 'code with backticks',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a JavaScript template literal is the point of the case.
    typed: 'run:\n\n```js\nconst s = `a ${b}` && x < y;\n```\n\ndone',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: as above.
    shown: 'run:\n\nconst s = `a ${b}` && x < y;\n\ndone',
  },
];

/**
 * Somebody's words that core quotes in its own texts (a goal, a memory fact, a schedule's task),
 * written with `literalMarkdown`: the chat must show each exactly as written, however much of it
 * reads as Markdown. Names are unique across both tables, so one `exceptions` map serves both.
 */
export const QUOTED_CASES: readonly { name: string; text: string }[] = [
  { name: 'quoted emphasis markers', text: 'snake_case_name, __init__, *stars*, **bold** and _under_' },
  { name: 'quoted code and strike markers', text: '~~struck~~, `code`, ``double ` tick`` and a lone `' },
  // Not `<https://example.com>`: GFM reads the `>` after an address as part of it, escaped or not.
  { name: 'quoted link syntax', text: '[label](https://example.com), ![alt](x.png), <b>tag</b>, <br/> and [ref][1]' },
  { name: 'quoted block markers', text: '# heading\n> quote\n- item\n+ item\n* item\n1. one\n2) two\n---\n===\nplain' },
  { name: 'quoted table syntax', text: '| a | b |\n|---|---|\n| 1 | 2 |' },
  { name: 'quoted backslashes', text: 'C:\\path\\to\\file, a\\*b, \\_ and a trailing backslash\\' },
  { name: 'quoted web addresses', text: 'see https://example.com/a_b_c?q=*x*&r=1 and www.example.com/~user/__x__ then **this**' },
  { name: 'quoted entities', text: '&amp; &lt;3 &#39; stay as typed' },
  { name: 'quoted scripts', text: '你好 *世界* 🚀 _مرحبا_' },
];

/** What a platform shows instead of a case's `shown`, and the platform's rule that makes it so. */
export interface RoundTripException {
  /** What the intake receives instead of `typed`, when the platform cannot carry it exactly. */
  read?: string;
  /** What the chat shows instead of `shown`. */
  shown?: string;
  /** The native links the chat carries instead of the case's (a platform without link markup). */
  links?: readonly { text: string; url: string }[];
  /** The platform's documented rule, with where it is written. */
  rule: string;
}
