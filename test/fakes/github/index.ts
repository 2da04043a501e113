/** A fake GitHub REST API for tests: point `api_url` (Octokit's `baseUrl`) at `FakeGitHub.apiUrl`. */
export { FakeGitHub } from './server.js';
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
export { AppJwtError, generateAppKeyPair, verifyAppJwt } from './jwt.js';
export type { AppJwtClaims, AppKeyPair } from './jwt.js';
