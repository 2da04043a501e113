import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const WEBHOOK_DIR = fileURLToPath(new URL('../../../../channels/slack/webhook/', import.meta.url));
/** What the webhook folder may import: Node, Fastify types, zod and its own files (never Bolt or core). */
const ALLOWED = [/^node:/, /^fastify$/, /^zod$/, /^\.\/[\w-]+\.js$/];

describe('channels/slack/webhook boundary', () => {
  it('imports neither the Slack SDK nor core', () => {
    const offenders = readdirSync(WEBHOOK_DIR)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => {
        const source = readFileSync(join(WEBHOOK_DIR, name), 'utf8');
        return [...source.matchAll(/from\s+['"]([^'"]+)['"]/g)]
          .map((match) => match[1] as string)
          .filter((spec) => !ALLOWED.some((pattern) => pattern.test(spec)))
          .map((spec) => `${name} imports ${spec}`);
      });
    expect(offenders).toEqual([]);
  });
});
