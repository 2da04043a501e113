/** What {@link ghEnvironment} needs to point `gh` at a started HTTPS `FakeGitHub`. */
export interface GhEnvironmentOptions {
  /** The fake's `host`, `127.0.0.1:<port>`; the port is allowed in `GH_HOST`. */
  host: string;
  /** The installation token `gh` sends, as `Authorization: token <token>`. */
  token: string;
  /** PEM file of the fake's self-signed certificate (`SelfSignedCert.certPath`). */
  caFile: string;
  /** A directory only this `gh` uses for config; need not exist (gh creates it when it writes). */
  configDir: string;
}

/**
 * The environment variables a `gh` child process needs to talk to the fake GitHub served over
 * HTTPS: merge them over `PATH` (and a `HOME`), nothing else. With them, `gh issue comment N
 * --repo owner/name --body B` and `gh pr comment …` reach the fake with the token. Checked
 * against gh 2.23.0 (Debian); names per https://cli.github.com/manual/gh_help_environment.
 */
export function ghEnvironment(options: GhEnvironmentOptions): Record<string, string> {
  return {
    // Required: the default host for `--repo owner/name`; without it gh goes to api.github.com.
    // Any host but github.com is an enterprise host: REST at https://HOST/api/v3/, GraphQL at
    // https://HOST/api/graphql. A port is accepted as part of the host.
    GH_HOST: options.host,
    // Required: for an enterprise host gh only sends GH_ENTERPRISE_TOKEN (then
    // GITHUB_ENTERPRISE_TOKEN). Undocumented: GH_TOKEN / GITHUB_TOKEN alone make gh 2.23.0 go
    // out without any Authorization header, which the fake answers 401.
    GH_ENTERPRISE_TOKEN: options.token,
    // Required: gh is Go, which on Linux reads its trusted roots from SSL_CERT_FILE instead of
    // the system bundle; without it the self-signed cert fails with "x509: certificate signed
    // by unknown authority". A side effect: this gh trusts no real host either.
    SSL_CERT_FILE: options.caFile,
    // Isolation: otherwise gh reads $HOME/.config/gh, where a developer's hosts.yml, aliases or
    // `http_unix_socket` would change what gh does. gh writes nothing there for these commands.
    GH_CONFIG_DIR: options.configDir,
    // Only matter when gh runs on a terminal (an agent's shell may have a pty). Observed: on a
    // pty, `gh issue comment N` without `--body` opens an editor and hangs; with this it exits 1
    // ("flags required when not running interactively"). The notifier would query github.com.
    GH_PROMPT_DISABLED: '1',
    GH_NO_UPDATE_NOTIFIER: '1',
  };
}
