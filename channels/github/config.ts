import { z } from 'zod';

const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/** A blank string (after trimming) counts as absent, so `webhook_secret: ""` in YAML is "no secret". */
const optionalSecret = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value === '' ? undefined : value));

/** `channels.github` of config.yaml (reference §7). */
export const githubConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe('Run the GitHub channel: mount POST /api/webhooks/github and fan deliveries out to agents. Also the live kill switch.'),
    webhook_secret: optionalSecret.describe(
      'Secret of the GitHub webhook; every delivery must carry X-Hub-Signature-256 = HMAC-SHA256(secret, body). Trimmed; blank means absent. Never logged.',
    ),
    allow_unverified: z
      .boolean()
      .default(false)
      .describe(
        'Development only: accept deliveries without a signature check when no webhook_secret is set (each is logged as a warning). Without a secret and without this, the route answers 503.',
      ),
    app_id: z
      .union([z.number().int().positive(), z.string().trim().regex(/^\d+$/, 'must be a numeric GitHub App id')], {
        error: 'must be a numeric GitHub App id, e.g. 123456',
      })
      .transform(Number)
      .refine((id) => id > 0, 'must be a positive GitHub App id')
      .optional()
      .describe('GitHub App id, to act as the App (comments, reactions); a number or a numeric string.'),
    private_key: optionalSecret
      .refine((key) => key === undefined || PEM_PRIVATE_KEY.test(key), 'must be a PEM private key (-----BEGIN … PRIVATE KEY-----)')
      .describe('PEM private key of the GitHub App, inline; wins over private_key_path. Never logged.'),
    private_key_path: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('Path of a file holding the GitHub App PEM private key; used when private_key is absent.'),
    api_url: z
      .url()
      .default('https://api.github.com')
      .transform((url) => url.replace(/\/+$/, ''))
      .describe('REST API root, e.g. https://ghe.example.com/api/v3 for GitHub Enterprise Server; a trailing slash is removed.'),
    default_mention_login: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('Login that mentions address (e.g. the App\'s bot login without "[bot]") when an agent binding names none.'),
  })
  .prefault({});

export type GitHubConfig = z.output<typeof githubConfigSchema>;
