/**
 * The GraphQL half of the fake GitHub, enough for `gh issue comment` and `gh pr comment`. What
 * gh 2.23.0 sends (seen with `GH_DEBUG=api`):
 *
 * - `query IssueByNumber`: `repository(owner, name) { hasIssuesEnabled issue: issueOrPullRequest(number) { __typename …on Issue{id,url} …on PullRequest{id,url} } }`
 * - `query PullRequestByNumber`: `repository(owner, name) { pullRequest(number) { id url number } }`
 * - `mutation CommentCreate`: `addComment(input: { subjectId, body }) { commentEdge { node { url } } }`
 *
 * A small parser and executor answer exactly the fields selected (aliases and inline fragments
 * included), as GitHub does. That matters: gh decodes mutation answers strictly and fails on any
 * extra field ("struct field for \"clientMutationId\" doesn't exist"). A field the fake lacks, an
 * unknown operation or a syntax it cannot read is answered with a GraphQL error, so it fails loudly.
 */

/** An issue or pull request GraphQL can find, made with {@link createFakeIssue}. */
export interface FakeIssue {
  /** `owner/name` as added: the canonical spelling answers use. */
  repo: string;
  number: number;
  isPullRequest: boolean;
  title: string;
  /** GraphQL global id, `I_…` or `PR_…`: what `addComment` takes as `subjectId`. */
  nodeId: string;
}

/** A GraphQL error as GitHub words it; GitHub sends these with status 200 and partial `data`. */
export interface GraphQLError {
  message: string;
  type?: string;
  path?: (string | number)[];
}

/** What the resolvers read and write. */
export interface GraphQLContext {
  /** Every issue and PR that exists; a repository exists once one of its issues does. */
  issues: readonly FakeIssue[];
  /** `http(s)://host:port`, for the web URLs in answers. */
  origin: string;
  /** Stores a comment on `issue` by the caller; returns its id and author login. */
  addComment(issue: FakeIssue, body: string): { id: number; login: string };
}

export interface GraphQLAnswer {
  /** The operation name (`IssueByNumber`), else the first root field; undefined when unreadable. */
  operation: string | undefined;
  data: Record<string, unknown> | null;
  errors: GraphQLError[];
}

type Args = Record<string, unknown>;
/** A field resolver: a plain value, or a function of the field's arguments. */
type Resolved = Record<string, unknown>;

interface FieldSelection {
  kind: 'field';
  alias: string | undefined;
  name: string;
  args: Args;
  selections: Selection[] | undefined;
}
type Selection = FieldSelection | { kind: 'fragment'; on: string; selections: Selection[] };

/** Thrown by a resolver: the field becomes null with this error, as GitHub does for NOT_FOUND. */
class FieldError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'FieldError';
  }
}

class GraphQLSyntaxError extends Error {
  override name = 'GraphQLSyntaxError';
}

/** An issue (or PR) record with a node id derived from repo and number, stable across runs. */
export function createFakeIssue(repo: string, number: number, options: { isPullRequest?: boolean; title?: string } = {}): FakeIssue {
  const isPullRequest = options.isPullRequest ?? false;
  const nodeId = `${isPullRequest ? 'PR' : 'I'}_${Buffer.from(`${repo}#${number}`).toString('base64url')}`;
  return { repo, number, isPullRequest, title: options.title ?? `${repo}#${number}`, nodeId };
}

/** Answers one GraphQL request body (`{ query, variables }`); never throws for a bad request. */
export function answerGraphQL(body: unknown, context: GraphQLContext): GraphQLAnswer {
  const { query, variables } = (body ?? {}) as { query?: unknown; variables?: Args };
  if (typeof query !== 'string') {
    return { operation: undefined, data: null, errors: [{ message: 'A query attribute must be specified and must be a string.' }] };
  }
  let parsed: { type: string; name: string | undefined; selections: Selection[] };
  try {
    parsed = new Parser(query, variables ?? {}).operation();
  } catch (error) {
    if (!(error instanceof GraphQLSyntaxError)) throw error;
    return { operation: undefined, data: null, errors: [{ message: `FakeGitHub cannot read this query: ${error.message}` }] };
  }
  const first = parsed.selections[0];
  const operation = parsed.name ?? (first?.kind === 'field' ? first.name : 'anonymous');
  const errors: GraphQLError[] = [];
  const root = parsed.type === 'mutation' ? mutationRoot(context) : queryRoot(context);
  return { operation, data: execute(parsed.selections, root, [], errors) as Record<string, unknown>, errors };
}

function queryRoot(context: GraphQLContext): Resolved {
  return {
    __typename: 'Query',
    repository: ({ owner, name }: Args) => {
      const fullName = `${String(owner)}/${String(name)}`;
      const issues = context.issues.filter((issue) => issue.repo.toLowerCase() === fullName.toLowerCase());
      const repo = issues[0]?.repo;
      if (repo === undefined) throw new FieldError('NOT_FOUND', `Could not resolve to a Repository with the name '${fullName}'.`);
      const lookup = (noun: string, accepts: (issue: FakeIssue) => boolean) => (args: Args) => {
        const issue = issues.find((candidate) => candidate.number === args.number && accepts(candidate));
        if (!issue) throw new FieldError('NOT_FOUND', `Could not resolve to ${noun} with the number of ${String(args.number)}.`);
        return issueNode(issue, context.origin);
      };
      return {
        __typename: 'Repository',
        id: `R_${Buffer.from(repo).toString('base64url')}`,
        name: repo.split('/')[1],
        owner: { __typename: 'Organization', login: repo.split('/')[0] },
        nameWithOwner: repo,
        url: `${context.origin}/${repo}`,
        hasIssuesEnabled: true,
        issueOrPullRequest: lookup('an issue or pull request', () => true),
        pullRequest: lookup('a PullRequest', (issue) => issue.isPullRequest),
        issue: lookup('an Issue', (issue) => !issue.isPullRequest),
      };
    },
  };
}

function mutationRoot(context: GraphQLContext): Resolved {
  return {
    __typename: 'Mutation',
    addComment: ({ input }: Args) => {
      const { subjectId, body } = (input ?? {}) as { subjectId?: unknown; body?: unknown };
      const subject = context.issues.find((issue) => issue.nodeId === subjectId);
      if (!subject) throw new FieldError('NOT_FOUND', `Could not resolve to a node with the global id of '${String(subjectId)}'`);
      if (typeof body !== 'string' || body.trim() === '') throw new FieldError('UNPROCESSABLE', "Body can't be blank");
      const { id, login } = context.addComment(subject, body);
      const node = issueNode(subject, context.origin);
      return {
        __typename: 'AddCommentPayload',
        clientMutationId: null,
        subject: node,
        commentEdge: {
          __typename: 'IssueCommentEdge',
          cursor: `cursor:${id}`,
          node: {
            __typename: 'IssueComment',
            id: `IC_${id}`,
            databaseId: id,
            body,
            url: `${node.url}#issuecomment-${id}`,
            author: { __typename: 'Bot', login },
          },
        },
      };
    },
  };
}

function issueNode(issue: FakeIssue, origin: string): Resolved & { url: string } {
  const url = `${origin}/${issue.repo}/${issue.isPullRequest ? 'pull' : 'issues'}/${issue.number}`;
  const typename = issue.isPullRequest ? 'PullRequest' : 'Issue';
  return { __typename: typename, id: issue.nodeId, number: issue.number, title: issue.title, url, state: 'OPEN', closed: false };
}

/** Projects `value` through `selections`: resolver errors and unknown fields become null plus an error. */
function execute(selections: Selection[], value: unknown, path: (string | number)[], errors: GraphQLError[]): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item, index) => execute(selections, item, [...path, index], errors));
  const object = value as Resolved;
  const out: Record<string, unknown> = {};
  for (const selection of selections) {
    if (selection.kind === 'fragment') {
      if (object.__typename === selection.on) Object.assign(out, execute(selection.selections, object, path, errors));
      continue;
    }
    const key = selection.alias ?? selection.name;
    out[key] = null;
    if (!(selection.name in object)) {
      errors.push({ path: [...path, key], message: `Field '${selection.name}' doesn't exist on type '${String(object.__typename)}'` });
      continue;
    }
    try {
      const field = object[selection.name];
      const resolved = typeof field === 'function' ? (field as (args: Args) => unknown)(selection.args) : field;
      out[key] = selection.selections ? execute(selection.selections, resolved, [...path, key], errors) : resolved;
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      errors.push({ type: error.type, path: [...path, key], message: error.message });
    }
  }
  return out;
}

/** Reads one operation of an executable GraphQL document; variables are substituted while parsing. */
class Parser {
  private readonly tokens: string[] = [];
  private position = 0;

  constructor(
    source: string,
    private readonly variables: Args,
  ) {
    // Commas are insignificant in GraphQL, like white space and comments.
    const token = /[\s,]+|#[^\n]*|(\.\.\.|[{}():!$[\]=@]|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|[_A-Za-z]\w*)|(.)/gy;
    for (const [, lexeme, stray] of source.matchAll(token)) {
      if (stray !== undefined) throw new GraphQLSyntaxError(`unexpected character '${stray}'`);
      if (lexeme !== undefined) this.tokens.push(lexeme);
    }
  }

  operation(): { type: string; name: string | undefined; selections: Selection[] } {
    let type = 'query';
    let name: string | undefined;
    if (this.peek() === 'query' || this.peek() === 'mutation') {
      type = this.next();
      if (this.peek() !== '(' && this.peek() !== '{') name = this.next();
      // Variable definitions: their values arrive in `variables`.
      if (this.peek() === '(') this.skipBalanced('(', ')');
    }
    const selections = this.selectionSet();
    if (this.peek() !== undefined) throw new GraphQLSyntaxError('only one operation per document is supported');
    return { type, name, selections };
  }

  private selectionSet(): Selection[] {
    this.expect('{');
    const selections: Selection[] = [];
    while (this.peek() !== '}') {
      if (this.peek() === '...') {
        this.next();
        if (this.next() !== 'on') throw new GraphQLSyntaxError('named fragments are not supported');
        selections.push({ kind: 'fragment', on: this.next(), selections: this.selectionSet() });
        continue;
      }
      let name = this.next();
      let alias: string | undefined;
      if (this.peek() === ':') {
        this.next();
        alias = name;
        name = this.next();
      }
      const args: Args = {};
      if (this.peek() === '(') {
        this.next();
        while (this.peek() !== ')') {
          const argument = this.next();
          this.expect(':');
          args[argument] = this.value();
        }
        this.next();
      }
      const children = this.peek() === '{' ? this.selectionSet() : undefined;
      selections.push({ kind: 'field', alias, name, args, selections: children });
    }
    this.next();
    return selections;
  }

  private value(): unknown {
    const token = this.next();
    if (token === '$') return this.variables[this.next()];
    if (token.startsWith('"')) return JSON.parse(token) as unknown;
    if (/^-?\d/.test(token)) return Number(token);
    if (token === '[') {
      const list: unknown[] = [];
      while (this.peek() !== ']') list.push(this.value());
      this.next();
      return list;
    }
    if (token === '{') {
      const object: Args = {};
      while (this.peek() !== '}') {
        const key = this.next();
        this.expect(':');
        object[key] = this.value();
      }
      this.next();
      return object;
    }
    const literals: Record<string, unknown> = { true: true, false: false, null: null };
    return token in literals ? literals[token] : token;
  }

  private skipBalanced(open: string, close: string): void {
    let depth = 0;
    do {
      const token = this.next();
      if (token === open) depth += 1;
      if (token === close) depth -= 1;
    } while (depth > 0);
  }

  private peek(): string | undefined {
    return this.tokens[this.position];
  }

  private next(): string {
    const token = this.tokens[this.position++];
    if (token === undefined) throw new GraphQLSyntaxError('unexpected end of query');
    return token;
  }

  private expect(expected: string): void {
    const token = this.next();
    if (token !== expected) throw new GraphQLSyntaxError(`expected '${expected}', found '${token}'`);
  }
}
