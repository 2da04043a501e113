/**
 * Secrets that other systems echo in their error texts, masked before a text reaches a log: a
 * model endpoint's 401 repeats part of the key (OpenAI: "Incorrect API key provided:
 * sk-abc1***wxyz"), HTTP clients put credentials in URLs, SDKs quote tokens. Each rule keeps
 * what helps to recognise the failure (the scheme, the field name) and drops the value.
 */
const RULES: ReadonlyArray<[pattern: RegExp, replacement: string]> = [
  // "...key provided: <masked key>." — whatever follows, up to the sentence's end.
  [/(key provided:\s*)[^\s.,;"]+/gi, '$1[redacted]'],
  // Well-known token shapes: OpenAI/Anthropic-style keys, Slack, GitHub, Telegram bot tokens.
  [/\bsk-[A-Za-z0-9_*.-]{3,}/g, 'sk-[redacted]'],
  [/\bxox[abposr]-[A-Za-z0-9-]{6,}/g, 'xox-[redacted]'],
  [/\b(?:gh[opsur]_|github_pat_)[A-Za-z0-9_]{8,}/g, 'gh-[redacted]'],
  [/(?<![0-9])\d{6,12}:[A-Za-z0-9_-]{30,}/g, '[redacted-bot-token]'],
  // Authorization schemes and `name=value` / `"name": "value"` pairs with a secret-looking name.
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=*-]{6,}/gi, '$1 [redacted]'],
  [
    /\b([A-Za-z_-]*(?:api[_-]?key|token|secret|password|passwd|credential)s?)(\\?["']?\s*[:=]\s*\\?["']?)[^\s"'\\,;&}]+/gi,
    '$1$2[redacted]',
  ],
  // Credentials inside a URL: scheme://user:pass@host.
  [/([a-z][a-z0-9+.-]*:\/\/)[^/@\s:"]+:[^/@\s"]+@/gi, '$1[redacted]@'],
];

/** `text` with every secret-looking value masked; pure. JSON stays JSON: no rule crosses a quote. */
export function redactSecrets(text: string): string {
  let result = text;
  for (const [pattern, replacement] of RULES) result = result.replace(pattern, replacement);
  return result;
}
