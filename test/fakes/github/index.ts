/**
 * A fake GitHub API for tests: point `api_url` (Octokit's `baseUrl`) at `FakeGitHub.apiUrl`, or
 * serve it over HTTPS (`createSelfSignedCert`) and run the real `gh` with `ghEnvironment`.
 */

export type { GhEnvironmentOptions } from './gh.js';
export { ghEnvironment } from './gh.js';
export type { FakeIssue } from './graphql.js';
export type { AppJwtClaims, AppKeyPair } from './jwt.js';
export { AppJwtError, generateAppKeyPair, verifyAppJwt } from './jwt.js';
export type {
  FakeGitHubOptions,
  FakeGitHubRoute,
  GitHubFault,
  MintedToken,
  ReactionTarget,
  RecordedGitHubCall,
  RepoRole,
  StoredComment,
  StoredReaction,
} from './server.js';
export { FakeGitHub } from './server.js';
export type { SelfSignedCert } from './tls.js';
export { createSelfSignedCert } from './tls.js';
