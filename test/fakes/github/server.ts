import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { answerGraphQL, createFakeIssue, type FakeIssue } from './graphql.js';
import { AppJwtError, verifyAppJwt } from './jwt.js';

/**
 * A fake GitHub API on 127.0.0.1 (plain HTTP, or HTTPS with the `tls` option) for the real
 * `@octokit/app` / `@octokit/core` clients and the real `gh` CLI, laid out as GitHub Enterprise
 * Server: REST under `/api/v3` (`apiUrl` is what `channels.github.api_url` points at), GraphQL at
 * `/api/graphql`. Covers minting installation tokens (App JWT verified with the App's public key),
 * collaborator permissions, reactions and issue comments, by REST or by the GraphQL `addComment`
 * mutation `gh issue comment` / `gh pr comment` send. Every call is recorded with its headers
 * (authorization included, so tests can assert the token used); faults and delays are injected per route.
 */

/** The routes the fake serves; `unknown` is anything else (answered 404). */
export type FakeGitHubRoute = 'access_tokens' | 'permission' | 'reaction' | 'comment' | 'graphql' | 'unknown';

/** A role on a repository. */
export type RepoRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

/** What a reaction was put on, as the route names it. */
export type ReactionTarget =
  | { kind: 'issue'; number: number }
  | { kind: 'issue_comment'; id: number }
  | { kind: 'review_comment'; id: number };

/** One request as it arrived. */
export interface RecordedGitHubCall {
  route: FakeGitHubRoute;
  method: string;
  /** URL path without the query, prefix included (`/api/v3/...`), percent-encoding kept. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; `undefined` when there was none. */
  body: unknown;
  /** Arrival time, ms since the epoch. */
  at: number;
  /** HTTP status of the answer, set once answered. */
  status?: number;
  /** `graphql` calls that passed the token check: the operation name (`IssueByNumber`), else the first root field. */
  operation?: string;
  /** `graphql` calls: the messages of the GraphQL errors answered (GitHub sends them with status 200). */
  graphqlErrors?: string[];
}

/** An injected fault: wait `delayMs` (default 0), then answer `status` with GitHub's error shape, or normally when absent. */
export interface GitHubFault {
  status?: number;
  message?: string;
  delayMs?: number;
}

/** An installation token the fake handed out. */
export interface MintedToken {
  token: string;
  installationId: number;
  expiresAtMs: number;
}

export interface StoredReaction {
  id: number;
  repo: string;
  target: ReactionTarget;
  content: string;
  login: string;
}

export interface StoredComment {
  id: number;
  repo: string;
  number: number;
  body: string;
  login: string;
}

export interface FakeGitHubOptions {
  appId: number;
  /** SPKI PEM public key of the App; App JWTs must verify against it. */
  publicKey: string;
  /** The App's slug; its bot user is `<slug>[bot]`. Default `deerflow-test`. */
  appSlug?: string;
  /** Lifetime of minted tokens, ms. Default 60 minutes, as on GitHub. */
  tokenTtlMs?: number;
  /** Serve HTTPS with this PEM pair (see `createSelfSignedCert`) instead of plain HTTP. Default: HTTP. */
  tls?: { cert: string; key: string };
}

const PREFIX = '/api/v3';
/** Where GitHub Enterprise Server answers GraphQL (github.com uses `api.github.com/graphql`). */
const GRAPHQL_PATH = '/api/graphql';
const DOCS = 'https://docs.github.com/rest';
/** GitHub's reaction contents; anything else is 422. https://docs.github.com/rest/reactions/reactions#about-reactions */
const REACTION_CONTENTS = new Set(['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes']);
/**
 * `permission` holds the legacy base role: "the maintain role is mapped to write and the triage
 * role is mapped to read"; `role_name` holds the real one.
 * https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user
 */
const LEGACY_PERMISSION: Record<RepoRole, string> = {
  admin: 'admin',
  maintain: 'write',
  write: 'write',
  triage: 'read',
  read: 'read',
  none: 'none',
};
const OWNER_REPO = `${PREFIX}/repos/([^/]+)/([^/]+)`;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpFailure';
  }
}

type Params = string[];
type RouteHandler = (call: RecordedGitHubCall, params: Params) => { status: number; body: unknown };

interface RouteDef {
  route: Exclude<FakeGitHubRoute, 'unknown'>;
  method: string;
  /** Matched against the whole path, prefix included. */
  pattern: RegExp;
  handler: RouteHandler;
}

export class FakeGitHub {
  /** Lifetime given to tokens minted from now on, ms. */
  tokenTtlMs: number;
  readonly appId: number;
  readonly appSlug: string;
  /** Reactions the API accepted, in order. */
  readonly reactions: StoredReaction[] = [];
  /** Issue / PR comments the API accepted, in order. */
  readonly comments: StoredComment[] = [];

  private readonly publicKey: string;
  private readonly tls: { cert: string; key: string } | undefined;
  private readonly issues = new Map<string, FakeIssue>();
  private readonly recorded: RecordedGitHubCall[] = [];
  private readonly tokens = new Map<string, MintedToken>();
  private readonly roles = new Map<string, RepoRole>();
  private readonly faults = new Map<FakeGitHubRoute, { fault: GitHubFault; remaining: number }[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly routes: RouteDef[];
  private nextId = 1000;
  private server: Server | HttpsServer | undefined;
  private port = 0;

  constructor(options: FakeGitHubOptions) {
    this.appId = options.appId;
    this.publicKey = options.publicKey;
    this.appSlug = options.appSlug ?? 'deerflow-test';
    this.tokenTtlMs = options.tokenTtlMs ?? 60 * 60 * 1000;
    this.tls = options.tls;
    this.routes = [
      {
        route: 'access_tokens',
        method: 'POST',
        pattern: new RegExp(`^${PREFIX}/app/installations/(\\d+)/access_tokens$`),
        handler: (call, [id]) => this.mint(call, Number(id)),
      },
      {
        route: 'permission',
        method: 'GET',
        pattern: new RegExp(`^${OWNER_REPO}/collaborators/([^/]+)/permission$`),
        handler: (call, [owner, repo, login]) => this.permission(call, `${owner}/${repo}`, login ?? ''),
      },
      {
        route: 'reaction',
        method: 'POST',
        pattern: new RegExp(`^${OWNER_REPO}/issues/(\\d+)/reactions$`),
        handler: (call, [owner, repo, n]) => this.react(call, `${owner}/${repo}`, { kind: 'issue', number: Number(n) }),
      },
      {
        route: 'reaction',
        method: 'POST',
        pattern: new RegExp(`^${OWNER_REPO}/issues/comments/(\\d+)/reactions$`),
        handler: (call, [owner, repo, id]) => this.react(call, `${owner}/${repo}`, { kind: 'issue_comment', id: Number(id) }),
      },
      {
        route: 'reaction',
        method: 'POST',
        pattern: new RegExp(`^${OWNER_REPO}/pulls/comments/(\\d+)/reactions$`),
        handler: (call, [owner, repo, id]) => this.react(call, `${owner}/${repo}`, { kind: 'review_comment', id: Number(id) }),
      },
      {
        route: 'comment',
        method: 'POST',
        pattern: new RegExp(`^${OWNER_REPO}/issues/(\\d+)/comments$`),
        handler: (call, [owner, repo, n]) => this.comment(call, `${owner}/${repo}`, Number(n)),
      },
      { route: 'graphql', method: 'POST', pattern: new RegExp(`^${GRAPHQL_PATH}$`), handler: (call) => this.graphql(call) },
    ];
  }

  /** `http://127.0.0.1:<port>/api/v3` (`https://` with `tls`), no trailing slash: the `api_url` to configure. Throws before `start()`. */
  get apiUrl(): string {
    return `${this.origin}${PREFIX}`;
  }

  /** `127.0.0.1:<port>`: the enterprise host name `gh` takes as `GH_HOST`. Throws before `start()`. */
  get host(): string {
    if (!this.server) throw new Error('FakeGitHub is not started');
    return `127.0.0.1:${this.port}`;
  }

  private get origin(): string {
    return `${this.tls ? 'https' : 'http'}://${this.host}`;
  }

  /** The App's bot login, `<slug>[bot]`. */
  get botLogin(): string {
    return `${this.appSlug}[bot]`;
  }

  /** Every request so far, in arrival order. */
  get calls(): readonly RecordedGitHubCall[] {
    return this.recorded;
  }

  /** Recorded requests to one route. */
  callsTo(route: FakeGitHubRoute): RecordedGitHubCall[] {
    return this.recorded.filter((call) => call.route === route);
  }

  /** Every installation token handed out, oldest first (for asserting none leaks into logs). */
  get mintedTokens(): readonly MintedToken[] {
    return [...this.tokens.values()];
  }

  /** Listens on a free port; resolves to `apiUrl`. */
  async start(): Promise<string> {
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { message: `fake error: ${String(error)}` });
        else res.destroy();
      });
    };
    const server = this.tls ? createHttpsServer({ cert: this.tls.cert, key: this.tls.key }, listener) : createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this.apiUrl;
  }

  /** Cancels pending delays and closes every connection. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Sets `login`'s role on `repo` (`owner/name`); both case-insensitive, as on GitHub. Logins not set get 404. */
  setRole(repo: string, login: string, role: RepoRole): this {
    this.roles.set(roleKey(repo, login), role);
    return this;
  }

  /**
   * Makes issue (or, with `isPullRequest`, pull request) `number` exist in `repo` (`owner/name`)
   * for GraphQL lookups; a number not added answers GitHub's NOT_FOUND error, so a test sees when
   * `gh` targeted the wrong one. Adding it again replaces it. The REST comment route needs none.
   */
  addIssue(repo: string, number: number, options: { isPullRequest?: boolean; title?: string } = {}): FakeIssue {
    const issue = createFakeIssue(repo, number, options);
    this.issues.set(issueKey(repo, number), issue);
    return issue;
  }

  /**
   * Hands out an installation token as if minted through the API, for tests about a client of
   * the token (such as `gh`) rather than about minting. Expires after `tokenTtlMs`.
   */
  mintToken(installationId: number): MintedToken {
    const minted: MintedToken = {
      token: `ghs_${randomBytes(18).toString('base64url')}`,
      installationId,
      expiresAtMs: Date.now() + this.tokenTtlMs,
    };
    this.tokens.set(minted.token, minted);
    return minted;
  }

  /** The next `times` requests to `route` (default 1; `Infinity` for all) get `fault`. */
  failNext(route: FakeGitHubRoute, fault: GitHubFault, times = 1): this {
    const list = this.faults.get(route) ?? [];
    list.push({ fault, remaining: times });
    this.faults.set(route, list);
    return this;
  }

  /** Drops every pending fault. */
  clearFaults(): void {
    this.faults.clear();
  }

  /** Expires `token`, or every token minted so far: using one then gets 401 `Bad credentials`. */
  expireTokens(token?: string): void {
    for (const minted of this.tokens.values()) if (token === undefined || minted.token === token) minted.expiresAtMs = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const call: RecordedGitHubCall = { route: 'unknown', method, path, headers: { ...req.headers }, body: undefined, at: Date.now() };
    this.recorded.push(call);
    const answer = (status: number, body: unknown) => {
      call.status = status;
      sendJson(res, status, body);
    };
    try {
      call.body = await readJson(req);
      const match = this.match(method, path);
      if (match) call.route = match.def.route;
      await this.applyFault(call.route);
      if (!match) throw new HttpFailure(404, 'Not Found');
      const { status, body } = match.def.handler(call, match.params);
      answer(status, body);
    } catch (error) {
      if (!(error instanceof HttpFailure)) throw error;
      answer(error.status, { message: error.message, documentation_url: DOCS, status: String(error.status) });
    }
  }

  private match(method: string, path: string): { def: RouteDef; params: Params } | undefined {
    for (const def of this.routes) {
      if (def.method !== method) continue;
      const found = def.pattern.exec(path);
      if (found) return { def, params: found.slice(1).map((part) => decodeURIComponent(part)) };
    }
    return undefined;
  }

  private async applyFault(route: FakeGitHubRoute): Promise<void> {
    const list = this.faults.get(route);
    const entry = list?.[0];
    if (!list || !entry) return;
    entry.remaining -= 1;
    if (entry.remaining <= 0) list.shift();
    const { delayMs, status, message } = entry.fault;
    if (delayMs !== undefined && delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          resolve();
        }, delayMs);
        this.timers.add(timer);
      });
    }
    if (status !== undefined) throw new HttpFailure(status, message ?? defaultMessage(status));
  }

  /** `POST /app/installations/{id}/access_tokens`: needs a valid App JWT. */
  private mint(call: RecordedGitHubCall, installationId: number): { status: number; body: unknown } {
    const jwt = credentialsOf(call.headers);
    if (jwt === undefined) throw new HttpFailure(401, 'A JSON web token could not be decoded');
    try {
      verifyAppJwt(jwt, { appId: this.appId, publicKey: this.publicKey, nowSeconds: Math.floor(Date.now() / 1000) });
    } catch (error) {
      if (error instanceof AppJwtError) throw new HttpFailure(401, error.message);
      throw error;
    }
    const { token, expiresAtMs } = this.mintToken(installationId);
    return {
      status: 201,
      body: {
        token,
        // GitHub sends whole seconds: "2016-07-11T22:14:10Z".
        expires_at: `${new Date(expiresAtMs).toISOString().slice(0, 19)}Z`,
        permissions: { issues: 'write', pull_requests: 'write', contents: 'write', metadata: 'read' },
        repository_selection: 'all',
      },
    };
  }

  /** Throws 401 unless the call carries an installation token this fake minted that has not expired. */
  private requireInstallationToken(call: RecordedGitHubCall): void {
    const token = credentialsOf(call.headers);
    if (token === undefined) throw new HttpFailure(401, 'Requires authentication');
    const minted = this.tokens.get(token);
    if (!minted || minted.expiresAtMs <= Date.now()) throw new HttpFailure(401, 'Bad credentials');
  }

  private permission(call: RecordedGitHubCall, repo: string, login: string): { status: number; body: unknown } {
    this.requireInstallationToken(call);
    const role = this.roles.get(roleKey(repo, login));
    if (role === undefined) throw new HttpFailure(404, 'Not Found');
    return { status: 200, body: { permission: LEGACY_PERMISSION[role], role_name: role, user: { login } } };
  }

  private react(call: RecordedGitHubCall, repo: string, target: ReactionTarget): { status: number; body: unknown } {
    this.requireInstallationToken(call);
    const content = (call.body as { content?: unknown } | undefined)?.content;
    if (typeof content !== 'string' || !REACTION_CONTENTS.has(content)) throw new HttpFailure(422, 'Validation Failed');
    const body = (reaction: StoredReaction) => ({ id: reaction.id, content: reaction.content, user: { login: reaction.login } });
    const existing = this.reactions.find(
      (r) => r.repo === repo && r.content === content && JSON.stringify(r.target) === JSON.stringify(target),
    );
    // GitHub answers 200 with the existing reaction when the same user reacts twice.
    if (existing) return { status: 200, body: body(existing) };
    const reaction: StoredReaction = { id: this.nextId++, repo, target, content, login: this.botLogin };
    this.reactions.push(reaction);
    return { status: 201, body: body(reaction) };
  }

  private comment(call: RecordedGitHubCall, repo: string, number: number): { status: number; body: unknown } {
    this.requireInstallationToken(call);
    const text = (call.body as { body?: unknown } | undefined)?.body;
    if (typeof text !== 'string' || text === '') throw new HttpFailure(422, 'Validation Failed');
    const comment: StoredComment = { id: this.nextId++, repo, number, body: text, login: this.botLogin };
    this.comments.push(comment);
    const htmlUrl = `https://github.com/${repo}/issues/${number}#issuecomment-${comment.id}`;
    return { status: 201, body: { id: comment.id, body: text, html_url: htmlUrl, user: { login: this.botLogin, type: 'Bot' } } };
  }

  /**
   * `POST /api/graphql`: needs an installation token; answers what `answerGraphQL` knows
   * (`./graphql.ts`), GraphQL errors with status 200 as GitHub does, recorded in `graphqlErrors`.
   */
  private graphql(call: RecordedGitHubCall): { status: number; body: unknown } {
    this.requireInstallationToken(call);
    const { operation, data, errors } = answerGraphQL(call.body, {
      issues: [...this.issues.values()],
      origin: this.origin,
      addComment: (issue, body) => {
        const comment: StoredComment = { id: this.nextId++, repo: issue.repo, number: issue.number, body, login: this.botLogin };
        this.comments.push(comment);
        return comment;
      },
    });
    if (operation !== undefined) call.operation = operation;
    if (errors.length === 0) return { status: 200, body: { data } };
    call.graphqlErrors = errors.map((error) => error.message);
    return { status: 200, body: { data, errors } };
  }
}

function issueKey(repo: string, number: number): string {
  return `${repo.toLowerCase()}#${number}`;
}

function roleKey(repo: string, login: string): string {
  return `${repo.toLowerCase()} ${login.toLowerCase()}`;
}

/** The credential of `Authorization: token X` or `Authorization: bearer X` (either case). */
function credentialsOf(headers: IncomingHttpHeaders): string | undefined {
  const match = /^(?:token|bearer)\s+(\S+)$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

function defaultMessage(status: number): string {
  if (status === 401) return 'Bad credentials';
  if (status === 403) return 'Forbidden';
  if (status === 404) return 'Not Found';
  if (status === 422) return 'Validation Failed';
  if (status >= 500) return 'Server Error';
  return 'Error';
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  if (parts.length === 0) return undefined;
  const text = Buffer.concat(parts).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpFailure(400, 'Problems parsing JSON');
  }
}
